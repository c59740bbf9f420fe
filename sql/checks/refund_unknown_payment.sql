-- name: refund_unknown_payment
-- description: A counted refund whose payment is not a live payment in the warehouse.
-- severity: error
-- requires: [payments, refunds]
-- tolerates: [refunds]
-- tags: [refunds]
WITH orphans AS (
    SELECT rp.id, rp.payment_id, rp.amount_minor, rp.currency
    FROM refund_payments AS rp
    WHERE rp.live_payment_id IS NULL
      AND NOT list_contains($failed_statuses, lower(coalesce(rp.status, '')))
)
SELECT
    'refund' AS entity,
    o.id AS entity_id,
    o.currency,
    o.amount_minor,
    'unknown_payment' AS issue_type,
    'refund of ' || recon_money(o.amount_minor, o.currency) || ' '
        || CASE WHEN o.payment_id IS NULL THEN 'has no payment id'
                WHEN g.id IS NOT NULL THEN 'of payment ' || o.payment_id || ', which vanished in run ' || g.gone_in_run
                ELSE 'of payment ' || o.payment_id || ', which is not listed' END AS detail
FROM orphans AS o
LEFT JOIN payments AS g ON g.id = o.payment_id AND g.gone_in_run IS NOT NULL
