-- name: refund_unknown_payment
-- description: A counted refund whose payment is not a live payment in the warehouse.
-- severity: error
-- requires: [payments, refunds]
-- tags: [refunds]
SELECT
    'refund' AS entity,
    r.id AS entity_id,
    r.currency,
    r.amount_minor,
    'unknown_payment' AS issue_type,
    'refund of ' || recon_money(r.amount_minor, r.currency) || ' '
        || CASE WHEN r.payment_id IS NULL THEN 'has no payment id'
                WHEN g.id IS NOT NULL THEN 'of payment ' || r.payment_id || ', which vanished in run ' || g.gone_in_run
                ELSE 'of payment ' || r.payment_id || ', which is not listed' END AS detail
FROM refunds AS r
LEFT JOIN payments AS p ON p.id = r.payment_id AND p.gone_in_run IS NULL
LEFT JOIN payments AS g ON g.id = r.payment_id AND g.gone_in_run IS NOT NULL
WHERE r.gone_in_run IS NULL
  AND NOT list_contains($failed_statuses, lower(coalesce(r.status, '')))
  AND p.id IS NULL
