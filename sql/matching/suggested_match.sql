-- name: suggested_match
-- description: Proposals for what no rule matched: an unmatched order that expects a payment and an unmatched settled payment in the same currency, the amount within the tolerance, dates at most RECON_LEDGER_DATE_WINDOW_DAYS apart. Scored; the order's best candidates are all listed: more than one (or a payment that is the best of several orders) is ambiguous, never a silent pick.
-- priority: 90
-- cardinality: 1:1
-- claims: proposes
-- parameters: [tolerance_minor, tolerance_bps, window_days]
WITH books AS (
    SELECT * FROM unmatched_orders WHERE expects_payment
),
provider AS (
    SELECT * FROM unmatched_payments WHERE settled AND amount_minor IS NOT NULL
),
pairs AS (
    SELECT
        o.order_key, p.id AS payment_id, o.currency,
        o.amount_minor - p.amount_minor AS difference,
        abs(date_diff('second', o.created_at, p.created_at)) // 86400 AS days_apart
    FROM books AS o
    JOIN provider AS p
      ON p.currency = o.currency
     AND p.amount_minor BETWEEN o.amount_minor - ledger_tolerance(o.amount_minor, $tolerance_minor, $tolerance_bps)
                            AND o.amount_minor + ledger_tolerance(o.amount_minor, $tolerance_minor, $tolerance_bps)
     AND p.created_at BETWEEN o.created_at - to_days(CAST($window_days AS INTEGER))
                          AND o.created_at + to_days(CAST($window_days AS INTEGER))
),
scored AS (
    SELECT *,
        100 - CASE WHEN difference = 0 THEN 0 ELSE 20 END - 10 * days_apart AS score,
        'same currency ' || currency || '; '
            || CASE WHEN difference = 0 THEN 'same amount'
                    ELSE 'amounts differ by ' || recon_money(abs(difference), currency) || ' (within tolerance)' END
            || '; ' || CASE WHEN days_apart = 0 THEN 'same day' ELSE days_apart || ' day(s) apart' END AS reasons
    FROM pairs
),
best AS (
    SELECT *, max(score) OVER (PARTITION BY order_key) AS order_best
    FROM scored
),
tops AS (
    SELECT *, count(*) OVER (PARTITION BY order_key) AS candidates
    FROM best WHERE score = order_best
)
SELECT order_key, payment_id, score, reasons, candidates,
       count(*) OVER (PARTITION BY payment_id) AS rivals
FROM tops
