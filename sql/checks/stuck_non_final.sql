-- name: stuck_non_final
-- description: A payment, refund or payment intent still in a non-final state more than $stuck_days days after it was created.
-- severity: warn
-- requires: []
-- per_resource: [payments, refunds, payment_intents]
-- tolerates: [payments, refunds, payment_intents]
-- requires_fields: [payments.created_at, refunds.created_at, payment_intents.created_at]
-- tags: [status, aging]
-- # Each record is judged on its own: evaluated per resource, over the records read tonight.
WITH candidates AS (
    SELECT 'payment' AS entity, 'payments' AS resource, id, status, currency, amount_minor, created_at
    FROM payments WHERE gone_in_run IS NULL
    UNION ALL
    SELECT 'refund', 'refunds', id, status, currency, amount_minor, created_at
    FROM refunds WHERE gone_in_run IS NULL
    UNION ALL
    SELECT 'payment_intent', 'payment_intents', id, status, currency, amount_minor, created_at
    FROM payment_intents WHERE gone_in_run IS NULL
)
SELECT
    c.entity,
    c.id AS entity_id,
    c.currency,
    c.amount_minor,
    'stuck_' || c.status AS issue_type,
    c.entity || ' ' || c.status || ' since ' || strftime(timezone('UTC', c.created_at), '%Y-%m-%d %H:%M UTC')
        || ' (' || date_diff('day', c.created_at, $as_of) || ' days; '
        || recon_money(c.amount_minor, c.currency) || ')' AS detail
FROM candidates AS c
JOIN status_values AS v ON v.entity = c.resource AND v.status = c.status AND v.is_final = false
WHERE c.created_at < $as_of - to_days(CAST($stuck_days AS INTEGER))
