-- Stage landed disputes. Only the list envelope is documented: every field is read at the
-- name the field mapping gives it (recon.fields, `[fields.disputes]`), through bound paths.
-- `amount` is a Money object. Codes are normalised (currency upper case, status lower case);
-- raw keeps the values as sent.
SELECT
    id,
    raw::JSON AS raw,
    landed_row($first_file + file_index, file_row_number) AS landed_row,
    json_extract_string(raw, $path_payment_id) AS payment_id,
    json_minor_units(json_extract(raw, $path_amount_minor)) AS amount_minor,
    upper(json_extract_string(raw, $path_currency)) AS currency,
    lower(json_extract_string(raw, $path_status)) AS status,
    json_extract_string(raw, $path_reason) AS reason,
    TRY_CAST(json_extract_string(raw, $path_created_at) AS TIMESTAMPTZ) AS created_at
FROM read_parquet($files)
