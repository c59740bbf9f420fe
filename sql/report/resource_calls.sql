-- Per resource, what its requests cost this run (recon.report): every attempt is a request;
-- 429s are the provider's "too many requests"; latency is time in flight.
SELECT
    resource,
    count(*)::BIGINT AS requests,
    count(*) FILTER (WHERE http_status = 429)::BIGINT AS responses_429,
    coalesce(sum(latency_ms), 0)::DOUBLE AS latency_ms
FROM api_calls
WHERE run_id = $run_id
GROUP BY resource
ORDER BY resource NULLS LAST
