-- Stage landed refunds (`amount` is a Money object).
-- Codes are normalised (currency upper case, status lower case); raw keeps the value as sent.
-- $path_created_at: the mapped `createdAt` (recon.fields; the spec does not show it).
SELECT
    id,
    raw::JSON AS raw,
    landed_row,
    j.paymentId AS payment_id,
    json_minor_units(j.amount.amountMinor) AS amount_minor,
    upper(j.amount.currency) AS currency,
    lower(j.status) AS status,
    TRY_CAST(json_extract_string(raw, $path_created_at) AS TIMESTAMPTZ) AS created_at
FROM (
    SELECT id, raw, landed_row($first_file + file_index, file_row_number) AS landed_row, json_transform(raw,
        '{"paymentId":"VARCHAR","amount":{"amountMinor":"JSON","currency":"VARCHAR"},"status":"VARCHAR"}') AS j
    FROM read_parquet($files)
)
