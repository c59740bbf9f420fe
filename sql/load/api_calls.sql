-- Every HTTP attempt of the run, from the landed call logs (batches landed before
-- `waited_ms` existed read it as 0: union_by_name fills the missing column with NULL).
INSERT INTO api_calls BY NAME
SELECT $run_id AS run_id, call_id, resource, method, path, query, attempt, http_status, error,
       message, request_id, latency_ms, outcome, "at" AS attempted_at,
       coalesce(waited_ms, 0) AS waited_ms
FROM read_parquet($files, union_by_name = true)
