-- Stage landed customer payment methods; the customer id comes from the request path (`scope`).
SELECT
    id,
    raw::JSON AS raw,
    md5(raw) AS content_hash,
    page_offset,
    scope AS customer_id,
    json_extract_string(raw, '$.type') AS type
FROM read_parquet($files)
