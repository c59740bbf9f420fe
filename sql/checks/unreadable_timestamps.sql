-- name: unreadable_timestamps
-- description: A record whose createdAt (or the field mapped to it) is there but is no timestamp recon can read (not a date, an impossible one, an epoch number), or lies more than a year after the run (2099, 9999-12-31); the value is shown as sent.
-- severity: warn
-- requires: []
-- per_resource: every resource with created_at
-- tolerates: every resource with created_at
-- tags: [dates]
-- # Evaluated per resource, over the records read tonight. The loader types an unreadable
-- # timestamp as NULL and keeps `raw`; the JSON value is read only for those and for the
-- # ones far ahead, so this stays cheap on big tables.
WITH paths AS (
    SELECT resource, max(json_path) AS path
    FROM field_presence WHERE run_id = $run_id AND field = 'created_at'
    GROUP BY resource
),
suspect AS (
    SELECT s.entity, s.id, s.created_at,
           json_extract(s.raw, coalesce(p.path, '$.createdAt')) AS sent
    FROM live_records AS s LEFT JOIN paths AS p USING (resource)
    WHERE s.gone_in_run IS NULL
      AND s.resource IN (SELECT resource FROM paths)
      AND (s.created_at IS NULL OR s.created_at > $as_of + INTERVAL 1 YEAR)
)
SELECT
    s.entity,
    s.id AS entity_id,
    CAST(NULL AS VARCHAR) AS currency,
    CAST(NULL AS BIGINT) AS amount_minor,
    CASE WHEN s.created_at IS NULL THEN 'unreadable_timestamp' ELSE 'future_timestamp' END AS issue_type,
    CASE WHEN s.created_at IS NULL THEN s.entity || ' createdAt is not a timestamp: '
         ELSE s.entity || ' createdAt lies in the future: ' END || CAST(s.sent AS VARCHAR) AS detail
FROM suspect AS s
WHERE s.sent IS NOT NULL AND json_type(s.sent) <> 'NULL'
