-- name: refund_in_flight
-- description: A payment with pending refunds younger than the grace (RECON_REFUND_GRACE_HOURS), in flight; the refund checks wait for them instead of raising errors.
-- severity: info
-- requires: [payments, refunds]
-- tolerates: [payments]
-- requires_fields: [refunds.created_at]
-- tags: [refunds, payments]
WITH counted AS (
    -- Counted refunds per live payment: sql/reference/refund_totals.sql.
    SELECT * FROM counted_refunds($failed_statuses, $as_of, $refund_grace_hours)
    WHERE young_count > 0
)
SELECT
    'payment' AS entity,
    c.payment_id AS entity_id,
    c.currency,
    c.young AS amount_minor,
    'refund_in_flight' AS issue_type,
    coalesce(c.payment_status, 'no status') || ' payment of ' || recon_money(c.payment_amount_minor, c.currency)
        || ': ' || recon_money(c.young, c.currency) || ' in ' || c.young_count
        || CASE WHEN c.young_count = 1 THEN ' pending refund' ELSE ' pending refunds' END
        || ' younger than ' || $refund_grace_hours || ' h (other counted refunds: '
        || recon_money(c.settled, c.currency) || ')' AS detail
FROM counted AS c
