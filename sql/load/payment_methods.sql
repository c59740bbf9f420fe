-- Stage landed customer payment methods; the customer id comes from the request path (`scope`).
SELECT
    id,
    raw::JSON AS raw,
    landed_row($first_file + file_index, file_row_number) AS landed_row,
    scope AS customer_id,
    json_extract_string(raw, '$.type') AS type
FROM read_parquet($files)
