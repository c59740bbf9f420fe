-- Every HTTP attempt of the run, from the landed call logs.
INSERT INTO api_calls
SELECT $run_id, call_id, resource, method, path, query, attempt, http_status, error, message,
       request_id, latency_ms, outcome, "at"
FROM read_parquet($files)
