-- name: amount_tolerance
-- description: An order matched by reference whose settled payments (its currency) differ from it by at most the tolerance (RECON_LEDGER_TOLERANCE_MINOR, or RECON_LEDGER_TOLERANCE_BPS of the order) is matched; the difference is kept and shown (ledger_matched_within_tolerance).
-- priority: 30
-- cardinality: 1:N
-- claims: linked
-- parameters: [tolerance_minor, tolerance_bps]
WITH pairs AS (
    SELECT l.order_row, l.order_key, l.payment_id, o.amount_minor AS order_amount,
           o.currency AS order_currency, o.expects_payment, p.settled, p.amount_minor, p.currency
    FROM match_links AS l
    JOIN match_orders AS o ON o.order_row = l.order_row
    JOIN match_payments AS p ON p.payment_row = l.payment_row
    WHERE l.rule IN ('exact_reference', 'normalised_reference')
),
-- only orders some settled payment of which differs from the order (a million exact
-- matches are not summed)
candidates AS (
    SELECT DISTINCT order_row FROM pairs
    WHERE expects_payment AND settled AND amount_minor IS DISTINCT FROM order_amount
),
linked AS (
    SELECT
        order_row,
        any_value(order_amount) AS amount_minor,
        count(*) FILTER (WHERE settled) AS settled,
        count(*) FILTER (WHERE settled AND currency IS DISTINCT FROM order_currency) AS other_currency,
        count(*) FILTER (WHERE settled AND amount_minor IS NULL) AS unknown,
        CAST(sum(amount_minor) FILTER (WHERE settled) AS BIGINT) AS paid,
        min(amount_minor) FILTER (WHERE settled) AS smallest
    FROM pairs
    WHERE order_row IN (SELECT order_row FROM candidates)
    GROUP BY order_row
)
SELECT p.order_key, p.payment_id
FROM pairs AS p
JOIN linked AS g ON g.order_row = p.order_row
WHERE g.settled > 0 AND g.other_currency = 0 AND g.unknown = 0
  AND g.paid <> g.amount_minor
  AND NOT (g.settled > 1 AND g.paid - g.smallest >= g.amount_minor)  -- a duplicate charge
  AND abs(g.paid - g.amount_minor) <= ledger_tolerance(g.amount_minor, $tolerance_minor, $tolerance_bps)
