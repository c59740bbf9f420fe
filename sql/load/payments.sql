-- Stage landed payments: one JSON parse per record; documented fields typed.
-- A value of the wrong JSON type loads as NULL (raw keeps it; check impossible_amounts flags it).
-- Codes are normalised (currency upper case, status lower case); raw keeps the value as sent.
-- $path_created_at: the mapped `createdAt` (recon.fields; the spec does not show it).
SELECT
    id,
    raw::JSON AS raw,
    md5(raw) AS content_hash,
    page_offset,
    json_minor_units(j.amountMinor) AS amount_minor,
    upper(j.currency) AS currency,
    lower(j.status) AS status,
    j.reference AS reference,
    TRY_CAST(json_extract_string(raw, $path_created_at) AS TIMESTAMPTZ) AS created_at
FROM (
    SELECT id, raw, page_offset, json_transform(raw,
        '{"amountMinor":"JSON","currency":"VARCHAR","status":"VARCHAR","reference":"VARCHAR"}') AS j
    FROM read_parquet($files)
)
