-- name: amount_tolerance
-- description: An order matched by reference whose settled payments (its currency) differ from it by at most the tolerance (RECON_LEDGER_TOLERANCE_MINOR, or RECON_LEDGER_TOLERANCE_BPS of the order) is matched; the difference is kept and shown (ledger_matched_within_tolerance).
-- priority: 30
-- cardinality: 1:N
-- claims: linked
-- parameters: [tolerance_minor, tolerance_bps]
WITH linked AS (
    SELECT
        l.order_key,
        any_value(o.amount_minor) AS amount_minor,
        count(*) FILTER (WHERE p.settled) AS settled,
        count(*) FILTER (WHERE p.settled AND p.currency IS DISTINCT FROM o.currency) AS other_currency,
        count(*) FILTER (WHERE p.settled AND p.amount_minor IS NULL) AS unknown,
        CAST(sum(p.amount_minor) FILTER (WHERE p.settled) AS BIGINT) AS paid,
        min(p.amount_minor) FILTER (WHERE p.settled) AS smallest
    FROM match_links AS l
    JOIN match_orders AS o ON o.order_key = l.order_key
    JOIN match_payments AS p ON p.id = l.payment_id
    WHERE l.rule IN ('exact_reference', 'normalised_reference') AND o.expects_payment
    GROUP BY l.order_key
)
SELECT l.order_key, l.payment_id
FROM match_links AS l
JOIN linked AS g ON g.order_key = l.order_key
WHERE g.settled > 0 AND g.other_currency = 0 AND g.unknown = 0
  AND g.paid <> g.amount_minor
  AND NOT (g.settled > 1 AND g.paid - g.smallest >= g.amount_minor)  -- a duplicate charge
  AND abs(g.paid - g.amount_minor) <= ledger_tolerance(g.amount_minor, $tolerance_minor, $tolerance_bps)
