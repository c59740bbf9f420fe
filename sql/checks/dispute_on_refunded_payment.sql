-- name: dispute_on_refunded_payment
-- description: A dispute on a payment that is refunded or partially refunded (from the dispute's payment reference).
-- severity: warn
-- requires: [disputes, payments]
-- tolerates: [disputes, payments]
-- requires_fields: [disputes.payment_id]
-- tags: [disputes, refunds]
-- evaluable_when: SELECT count(*) > 0 FROM disputes WHERE gone_in_run IS NULL AND coalesce(payment_id, '') <> ''
-- not_evaluated_reason: no dispute carries a payment reference
SELECT
    'dispute' AS entity,
    d.id AS entity_id,
    d.currency,
    d.amount_minor,
    'dispute_on_refunded_payment' AS issue_type,
    'dispute (' || coalesce(d.status, 'no status') || ') of ' || recon_money(d.amount_minor, d.currency)
        || ' on payment ' || p.id || ', which is ' || p.status AS detail
FROM disputes AS d
JOIN payments AS p ON p.id = d.payment_id AND p.gone_in_run IS NULL
WHERE d.gone_in_run IS NULL
  AND p.status IN ('refunded', 'partially_refunded')
