-- name: refund_currency_mismatch
-- description: A counted refund whose currency differs from its payment's (it is not added to the payment's refunded total).
-- severity: error
-- requires: [payments, refunds]
-- tolerates: [payments, refunds]
-- tags: [refunds, currency]
SELECT
    'refund' AS entity,
    rp.id AS entity_id,
    rp.currency,
    rp.amount_minor,
    'currency_mismatch' AS issue_type,
    'refund of ' || recon_money(rp.amount_minor, rp.currency)
        || ' on payment ' || rp.live_payment_id
        || ' of ' || recon_money(rp.payment_amount_minor, rp.payment_currency) AS detail
FROM refund_payments AS rp
WHERE rp.live_payment_id IS NOT NULL
  AND NOT list_contains($failed_statuses, lower(coalesce(rp.status, '')))
  AND rp.currency IS DISTINCT FROM rp.payment_currency
