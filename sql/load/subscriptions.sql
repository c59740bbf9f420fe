-- Stage landed subscriptions. Status is lower-cased; raw keeps the value as sent.
-- $path_created_at: the mapped `createdAt` (recon.fields; the spec does not show it).
SELECT
    id,
    raw::JSON AS raw,
    md5(raw) AS content_hash,
    page_offset,
    j.customerId AS customer_id,
    j.priceId AS price_id,
    lower(j.status) AS status,
    TRY_CAST(json_extract_string(raw, $path_created_at) AS TIMESTAMPTZ) AS created_at
FROM (
    SELECT id, raw, page_offset, json_transform(raw,
        '{"customerId":"VARCHAR","priceId":"VARCHAR","status":"VARCHAR"}') AS j
    FROM read_parquet($files)
)
