-- name: refund_on_unrefundable_payment
-- description: A counted refund on a payment whose state cannot be refunded (created, pending, cancelled, expired).
-- severity: error
-- requires: [payments, refunds]
-- tolerates: [payments, refunds]
-- tags: [refunds, payments]
SELECT
    'refund' AS entity,
    rp.id AS entity_id,
    rp.currency,
    rp.amount_minor,
    'unrefundable_payment_state' AS issue_type,
    'refund of ' || recon_money(rp.amount_minor, rp.currency)
        || ' (' || coalesce(rp.status, 'no status') || ') on payment ' || rp.live_payment_id
        || ' in state ' || rp.payment_status AS detail
FROM refund_payments AS rp
WHERE rp.live_payment_id IS NOT NULL
  AND NOT list_contains($failed_statuses, lower(coalesce(rp.status, '')))
  AND rp.payment_status IN ('created', 'pending', 'cancelled', 'expired')
