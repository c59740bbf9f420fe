-- name: volume_anomaly
-- description: A resource whose count of new records tonight differs from the mean of the last complete runs by more than $volume_ratio of that mean.
-- severity: warn
-- requires: []
-- per_resource: every resource
-- tags: [extraction, volume]
-- evaluable_when: SELECT count(*) >= 3 FROM runs WHERE status = 'complete' AND run_id <> $run_id AND started_at < $as_of
-- not_evaluated_reason: fewer than 3 earlier complete runs to compare with
WITH tonight AS (
    SELECT resource, new_records
    FROM resource_scans
    WHERE run_id = $run_id AND status = 'complete'
),
history AS (
    SELECT
        s.resource, s.new_records,
        row_number() OVER (PARTITION BY s.resource ORDER BY r.started_at DESC) AS recency,
        row_number() OVER (PARTITION BY s.resource ORDER BY r.started_at) AS age_rank
    FROM resource_scans AS s
    JOIN runs AS r ON r.run_id = s.run_id
    WHERE s.run_id <> $run_id AND r.started_at < $as_of
      AND r.status = 'complete' AND s.status = 'complete'
),
baseline AS (
    -- The last 7 complete nights, leaving out each resource's first complete scan: the
    -- initial load, in which every record is new, is not a night's volume.
    SELECT resource, avg(new_records) AS mean_new, count(*) AS nights
    FROM history
    WHERE recency <= 7 AND age_rank > 1
    GROUP BY resource
)
SELECT
    'resource' AS entity,
    t.resource AS entity_id,
    CAST(NULL AS VARCHAR) AS currency,
    CAST(NULL AS BIGINT) AS amount_minor,
    CASE WHEN t.new_records > b.mean_new THEN 'volume_spike' ELSE 'volume_drop' END AS issue_type,
    t.new_records || ' new ' || t.resource || ' tonight against a mean of ' || round(b.mean_new, 1)
        || ' over the last ' || b.nights || ' complete runs' AS detail
FROM tonight AS t
JOIN baseline AS b ON b.resource = t.resource
WHERE abs(t.new_records - b.mean_new) > $volume_ratio * b.mean_new
