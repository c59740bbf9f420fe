-- name: unknown_status
-- description: A record whose status is not one of the known values for its kind (see the status_values table), or that has none.
-- severity: warn
-- requires: []
-- per_resource: [payments, refunds, invoices, disputes, payment_intents, subscriptions]
-- tolerates: [payments, refunds, invoices, disputes, payment_intents, subscriptions]
-- requires_fields: [disputes.status]
-- tags: [status]
-- # Evaluated per resource, over the records read tonight. Statuses are lower-cased on load
-- # (raw keeps them as sent); a refund status configured as a failure ($failed_statuses) is
-- # known too.
WITH statuses AS (
    SELECT 'payment' AS entity, 'payments' AS resource, id, status FROM payments WHERE gone_in_run IS NULL
    UNION ALL SELECT 'refund', 'refunds', id, status FROM refunds WHERE gone_in_run IS NULL
    UNION ALL SELECT 'invoice', 'invoices', id, status FROM invoices WHERE gone_in_run IS NULL
    UNION ALL SELECT 'dispute', 'disputes', id, status FROM disputes WHERE gone_in_run IS NULL
    UNION ALL SELECT 'payment_intent', 'payment_intents', id, status FROM payment_intents WHERE gone_in_run IS NULL
    UNION ALL SELECT 'subscription', 'subscriptions', id, status FROM subscriptions WHERE gone_in_run IS NULL
),
known AS (
    SELECT entity AS resource, status FROM status_values
    UNION ALL
    SELECT 'refunds', unnest($failed_statuses)
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
ANTI JOIN known AS v ON v.resource = s.resource AND v.status = s.status
