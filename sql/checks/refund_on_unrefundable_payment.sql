-- name: refund_on_unrefundable_payment
-- description: A counted refund on a payment whose state cannot be refunded (created, pending, cancelled, expired).
-- severity: error
-- requires: [payments, refunds]
-- tags: [refunds, payments]
SELECT
    'refund' AS entity,
    r.id AS entity_id,
    r.currency,
    r.amount_minor,
    'unrefundable_payment_state' AS issue_type,
    'refund of ' || recon_money(r.amount_minor, r.currency)
        || ' (' || coalesce(r.status, 'no status') || ') on payment ' || p.id
        || ' in state ' || p.status AS detail
FROM refunds AS r
JOIN payments AS p ON p.id = r.payment_id AND p.gone_in_run IS NULL
WHERE r.gone_in_run IS NULL
  AND NOT list_contains($failed_statuses, lower(coalesce(r.status, '')))
  AND p.status IN ('created', 'pending', 'cancelled', 'expired')
