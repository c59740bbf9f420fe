-- Stage landed invoices (`amountDue` is a Money object). `subscriptionId`, `dueDate` and
-- `createdAt` are not shown by the spec: read at the mapped names (recon.fields,
-- `[fields.invoices]`) through bound paths. Codes are normalised (currency upper case, status
-- lower case); raw keeps the values as sent.
SELECT
    id,
    raw::JSON AS raw,
    landed_row,
    j.customerId AS customer_id,
    json_extract_string(raw, $path_subscription_id) AS subscription_id,
    lower(j.status) AS status,
    json_minor_units(j.amountDue.amountMinor) AS amount_due_minor,
    upper(j.amountDue.currency) AS currency,
    TRY_CAST(json_extract_string(raw, $path_due_date) AS DATE) AS due_date,
    TRY_CAST(json_extract_string(raw, $path_created_at) AS TIMESTAMPTZ) AS created_at
FROM (
    SELECT id, raw, landed_row($first_file + file_index, file_row_number) AS landed_row, json_transform(raw,
        '{"customerId":"VARCHAR","status":"VARCHAR","amountDue":{"amountMinor":"JSON","currency":"VARCHAR"}}') AS j
    FROM read_parquet($files)
)
