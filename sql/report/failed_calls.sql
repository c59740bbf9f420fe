-- API calls of a run that failed for good, oldest first, with every attempt's request id.
-- The one definition behind the closing lines of `recon nightly`, the Prefect artifact
-- `recon-failed-calls`, the alert and report.html/summary.json (recon.report.data.failed_calls).
SELECT
    resource, method, path, query, http_status, error, message, request_id,
    coalesce(request_ids, []) AS request_ids,
    attempts,
    strftime(timezone('UTC', attempted_at), '%Y-%m-%dT%H:%M:%SZ') AS attempted_at_utc
FROM failed_calls
WHERE run_id = $run_id
ORDER BY attempted_at, call_id
