-- Stage landed payment intents. `status` is documented; the spec leaves the enum, the
-- integer field (>= 0), the currency and `createdAt` unnamed: read at the mapped names
-- (recon.fields, `[fields.payment_intents]`) through bound paths. Codes are normalised
-- (currency upper case, status and capture method lower case); raw keeps the values as sent.
SELECT
    id,
    raw::JSON AS raw,
    landed_row,
    lower(j.status) AS status,
    lower(json_extract_string(raw, $path_capture_method)) AS capture_method,
    json_minor_units(json_extract(raw, $path_amount)) AS amount_minor,
    upper(json_extract_string(raw, $path_currency)) AS currency,
    TRY_CAST(json_extract_string(raw, $path_created_at) AS TIMESTAMPTZ) AS created_at
FROM (
    SELECT id, raw, landed_row($first_file + file_index, file_row_number) AS landed_row, json_transform(raw, '{"status":"VARCHAR"}') AS j
    FROM read_parquet($files)
)
