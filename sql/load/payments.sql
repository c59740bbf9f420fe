-- Stage landed payments: one JSON parse per record; documented fields typed.
-- A value of the wrong JSON type loads as NULL (raw keeps it; check impossible_amounts flags it).
-- Codes are normalised (currency upper case, status lower case); raw keeps the value as sent.
-- $path_created_at: the mapped `createdAt` (recon.fields; the spec does not show it).
SELECT
    id,
    raw::JSON AS raw,
    landed_row,
    json_minor_units(j.amountMinor) AS amount_minor,
    upper(j.currency) AS currency,
    lower(j.status) AS status,
    j.reference AS reference,
    TRY_CAST(json_extract_string(raw, $path_created_at) AS TIMESTAMPTZ) AS created_at
FROM (
    SELECT id, raw, landed_row($first_file + file_index, file_row_number) AS landed_row, json_transform(raw,
        '{"amountMinor":"JSON","currency":"VARCHAR","status":"VARCHAR","reference":"VARCHAR"}') AS j
    FROM read_parquet($files)
)
