-- Stage landed invoices (`amountDue` is a Money object; `dueDate` is undocumented).
SELECT
    id,
    raw::JSON AS raw,
    md5(raw) AS content_hash,
    page_offset,
    j.customerId AS customer_id,
    j.subscriptionId AS subscription_id,
    j.status AS status,
    CASE WHEN json_type(j.amountDue.amountMinor) IN ('BIGINT', 'UBIGINT')
         THEN TRY_CAST(j.amountDue.amountMinor::VARCHAR AS BIGINT) END AS amount_due_minor,
    j.amountDue.currency AS currency,
    TRY_CAST(j.dueDate AS DATE) AS due_date,
    TRY_CAST(j.createdAt AS TIMESTAMPTZ) AS created_at
FROM (
    SELECT id, raw, page_offset, json_transform(raw,
        '{"customerId":"VARCHAR","subscriptionId":"VARCHAR","status":"VARCHAR","amountDue":{"amountMinor":"JSON","currency":"VARCHAR"},"dueDate":"VARCHAR","createdAt":"VARCHAR"}') AS j
    FROM read_parquet($files)
)
