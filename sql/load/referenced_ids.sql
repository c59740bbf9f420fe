-- The distinct values of one top-level field ($path, e.g. '$.customerId') in tonight's landed
-- batches ($files): ids other records reference, which the night fetches one by one
-- (recon.night.known_ids).
SELECT DISTINCT json_extract_string(raw, $path)
FROM read_parquet($files)
WHERE json_extract_string(raw, $path) IS NOT NULL
