-- name: extraction_completeness
-- description: A resource whose extraction this run is not complete (failed pages, or the list is not offered); it gates the checks that need it.
-- severity: error
-- requires: []
-- tags: [extraction]
-- evaluable_when: SELECT count(*) > 0 FROM resource_scans WHERE run_id = $run_id
-- not_evaluated_reason: no resource was scanned in this run
SELECT
    'resource' AS entity,
    s.resource AS entity_id,
    CAST(NULL AS VARCHAR) AS currency,
    CAST(NULL AS BIGINT) AS amount_minor,
    s.status AS issue_type,
    s.resource || ' ' || s.status
        || coalesce(': ' || s.reason, '')
        || CASE WHEN s.failed_pages > 0
                THEN ' (' || s.failed_pages || CASE WHEN s.failed_pages = 1 THEN ' page' ELSE ' pages' END || ' failed)'
                ELSE '' END AS detail
FROM resource_scans AS s
WHERE s.run_id = $run_id
  -- `skipped` is a configured choice (e.g. no customer ids for payment methods), not a failure.
  AND s.status NOT IN ('complete', 'skipped')
