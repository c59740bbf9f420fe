-- Stage landed subscriptions. Status is lower-cased; raw keeps the value as sent.
-- $path_created_at: the mapped `createdAt` (recon.fields; the spec does not show it).
SELECT
    id,
    raw::JSON AS raw,
    landed_row,
    j.customerId AS customer_id,
    j.priceId AS price_id,
    lower(j.status) AS status,
    TRY_CAST(json_extract_string(raw, $path_created_at) AS TIMESTAMPTZ) AS created_at
FROM (
    SELECT id, raw, landed_row($first_file + file_index, file_row_number) AS landed_row, json_transform(raw,
        '{"customerId":"VARCHAR","priceId":"VARCHAR","status":"VARCHAR"}') AS j
    FROM read_parquet($files)
)
