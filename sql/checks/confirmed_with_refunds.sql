-- name: confirmed_with_refunds
-- description: A payment still marked confirmed that has counted refunds (not counting pending ones younger than the grace, which are in flight).
-- severity: error
-- requires: [payments, refunds]
-- tolerates: [payments]
-- tags: [refunds, payments]
WITH counted AS (
    -- Counted refunds per live payment: sql/reference/refund_totals.sql.
    SELECT * FROM counted_refunds($failed_statuses, $as_of, $refund_grace_hours)
    WHERE payment_status = 'confirmed'
)
SELECT
    'payment' AS entity,
    c.payment_id AS entity_id,
    c.currency,
    c.total AS amount_minor,
    'confirmed_with_refunds' AS issue_type,
    'confirmed, but refunded ' || recon_money(c.total, c.currency)
        || ' of ' || recon_money(c.payment_amount_minor, c.currency)
        || ' (in flight: ' || recon_money(c.in_flight, c.currency)
        || '; ' || c.refund_count || ' counted refunds'
        || recon_assumed(c.assumed, c.assumed_count, c.currency) || ')' AS detail
FROM counted AS c
-- Wrong whether or not the young pending refunds settle (in flight: refund_in_flight).
WHERE c.total > 0
  AND c.settled > 0
