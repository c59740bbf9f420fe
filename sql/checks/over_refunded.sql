-- name: over_refunded
-- description: A payment (any status) whose counted refunds exceed its amount.
-- severity: error
-- requires: [payments, refunds]
-- tolerates: [payments]
-- tags: [refunds, payments]
WITH counted AS (
    -- Counted refunds per live payment: sql/reference/refund_totals.sql.
    SELECT * FROM counted_refunds($failed_statuses, $as_of, $refund_grace_hours)
)
SELECT
    'payment' AS entity,
    c.payment_id AS entity_id,
    c.currency,
    c.total - c.payment_amount_minor AS amount_minor,
    'over_refunded' AS issue_type,
    'refunded ' || recon_money(c.total, c.currency)
        || ' of ' || recon_money(c.payment_amount_minor, c.currency)
        || ' (status ' || coalesce(c.payment_status, 'missing')
        || '; in flight: ' || recon_money(c.in_flight, c.currency)
        || '; ' || c.refund_count || ' counted refunds'
        || recon_assumed(c.assumed, c.assumed_count, c.currency) || ')' AS detail
FROM counted AS c
-- Wrong whether or not the young pending refunds settle (in flight: refund_in_flight).
WHERE c.total > c.payment_amount_minor
  AND c.settled > c.payment_amount_minor
