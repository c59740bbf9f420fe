-- Per resource, the time its requests were held back before they were sent this run (the
-- shared rate limiter, Retry-After pauses, backoff): api_calls.waited_ms.
SELECT resource, coalesce(sum(waited_ms), 0)::DOUBLE AS waited_ms
FROM api_calls
WHERE run_id = $run_id
GROUP BY resource
