-- name: stuck_non_final
-- description: A payment, refund or payment intent still in a non-final state more than $stuck_days days after it was created.
-- severity: warn
-- requires: []
-- per_resource: every resource with final_statuses
-- tolerates: every resource with final_statuses
-- requires_fields: ["*.created_at"]
-- tags: [status, aging]
-- # Each record is judged on its own: evaluated per resource, over the records read tonight.
WITH candidates AS (
    -- Only resources with non-final statuses can match (the join to status_values below).
    SELECT entity, resource, id, status, currency, amount_minor, created_at
    FROM live_records WHERE gone_in_run IS NULL
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
