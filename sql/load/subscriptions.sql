-- Stage landed subscriptions.
SELECT
    id,
    raw::JSON AS raw,
    md5(raw) AS content_hash,
    page_offset,
    j.customerId AS customer_id,
    j.priceId AS price_id,
    j.status AS status,
    TRY_CAST(j.createdAt AS TIMESTAMPTZ) AS created_at
FROM (
    SELECT id, raw, page_offset, json_transform(raw,
        '{"customerId":"VARCHAR","priceId":"VARCHAR","status":"VARCHAR","createdAt":"VARCHAR"}') AS j
    FROM read_parquet($files)
)
