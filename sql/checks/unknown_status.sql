-- name: unknown_status
-- description: A record whose status is not one of the known values for its kind (see the status_values table), or that has none.
-- severity: warn
-- requires: []
-- per_resource: every resource with statuses
-- tolerates: every resource with statuses
-- requires_fields: ["*.status"]
-- tags: [status]
-- # Evaluated per resource, over the records read tonight. Statuses are lower-cased on load
-- # (raw keeps them as sent); a refund status configured as a failure ($failed_statuses) is
-- # known too.
WITH statuses AS (
    -- The resources with known values (the catalogue's statuses, in status_values).
    SELECT entity, resource, id, status FROM live_records
    WHERE gone_in_run IS NULL AND resource IN (SELECT entity FROM status_values)
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
