-- name: refunded_amount_mismatch
-- description: A payment marked refunded whose counted refunds do not add up to its amount.
-- severity: error
-- requires: [payments, refunds]
-- tolerates: [payments]
-- tags: [refunds, payments]
WITH counted AS (
    -- Counted refunds per live payment: sql/reference/refund_totals.sql.
    SELECT * FROM counted_refunds($failed_statuses, $as_of, $refund_grace_hours)
    WHERE payment_status = 'refunded'
)
SELECT
    'payment' AS entity,
    p.id AS entity_id,
    p.currency,
    abs(p.amount_minor - coalesce(c.total, 0)) AS amount_minor,
    CASE WHEN coalesce(c.total, 0) < p.amount_minor THEN 'refunded_short' ELSE 'refunded_over' END AS issue_type,
    'refunded ' || recon_money(coalesce(c.total, 0), p.currency)
        || ' of ' || recon_money(p.amount_minor, p.currency)
        || ' (in flight: ' || recon_money(coalesce(c.in_flight, 0), p.currency)
        || '; ' || coalesce(c.refund_count, 0) || ' counted refunds'
        || recon_assumed(c.assumed, c.assumed_count, p.currency) || ')' AS detail
FROM payments AS p
LEFT JOIN counted AS c ON c.payment_id = p.id
WHERE p.gone_in_run IS NULL
  AND p.status = 'refunded'
  AND p.amount_minor IS NOT NULL
  -- Wrong whether or not the young pending refunds settle (in flight: refund_in_flight).
  AND coalesce(c.total, 0) <> p.amount_minor
  AND coalesce(c.settled, 0) <> p.amount_minor
