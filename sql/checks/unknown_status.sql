-- name: unknown_status
-- description: A record whose status is not one of the known values for its kind (see the status_values table).
-- severity: warn
-- requires: []
-- per_resource: [payments, refunds, invoices, disputes, payment_intents, subscriptions]
-- tags: [status]
WITH complete AS (
    SELECT resource FROM resource_scans WHERE run_id = $run_id AND status = 'complete'
),
statuses AS (
    SELECT 'payment' AS entity, 'payments' AS resource, id, status FROM payments WHERE gone_in_run IS NULL
    UNION ALL SELECT 'refund', 'refunds', id, status FROM refunds WHERE gone_in_run IS NULL
    UNION ALL SELECT 'invoice', 'invoices', id, status FROM invoices WHERE gone_in_run IS NULL
    UNION ALL SELECT 'dispute', 'disputes', id, status FROM disputes WHERE gone_in_run IS NULL
    UNION ALL SELECT 'payment_intent', 'payment_intents', id, status FROM payment_intents WHERE gone_in_run IS NULL
    UNION ALL SELECT 'subscription', 'subscriptions', id, status FROM subscriptions WHERE gone_in_run IS NULL
)
SELECT
    s.entity,
    s.id AS entity_id,
    CAST(NULL AS VARCHAR) AS currency,
    CAST(NULL AS BIGINT) AS amount_minor,
    'unknown_status' AS issue_type,
    CASE WHEN s.status IS NULL THEN s.entity || ' has no status'
         ELSE s.entity || ' status ''' || s.status || ''' is not a known value' END AS detail
FROM statuses AS s
ANTI JOIN status_values AS v ON v.entity = s.resource AND v.status = s.status
WHERE s.resource IN (SELECT resource FROM complete)
