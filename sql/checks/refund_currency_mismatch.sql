-- name: refund_currency_mismatch
-- description: A counted refund whose currency differs from its payment's (it is not added to the payment's refunded total).
-- severity: error
-- requires: [payments, refunds]
-- tags: [refunds, currency]
SELECT
    'refund' AS entity,
    r.id AS entity_id,
    r.currency,
    r.amount_minor,
    'currency_mismatch' AS issue_type,
    'refund of ' || recon_money(r.amount_minor, r.currency)
        || ' on payment ' || p.id || ' of ' || recon_money(p.amount_minor, p.currency) AS detail
FROM refunds AS r
JOIN payments AS p ON p.id = r.payment_id AND p.gone_in_run IS NULL
WHERE r.gone_in_run IS NULL
  AND NOT list_contains($failed_statuses, lower(coalesce(r.status, '')))
  AND r.currency IS DISTINCT FROM p.currency
