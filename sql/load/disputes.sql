-- Stage landed disputes (only the list envelope is documented; the fields are recon's reading).
SELECT
    id,
    raw::JSON AS raw,
    md5(raw) AS content_hash,
    page_offset,
    j.paymentId AS payment_id,
    CASE WHEN json_type(j.amount.amountMinor) IN ('BIGINT', 'UBIGINT')
         THEN TRY_CAST(j.amount.amountMinor::VARCHAR AS BIGINT) END AS amount_minor,
    j.amount.currency AS currency,
    j.status AS status,
    j.reason AS reason,
    TRY_CAST(j.createdAt AS TIMESTAMPTZ) AS created_at
FROM (
    SELECT id, raw, page_offset, json_transform(raw,
        '{"paymentId":"VARCHAR","amount":{"amountMinor":"JSON","currency":"VARCHAR"},"status":"VARCHAR","reason":"VARCHAR","createdAt":"VARCHAR"}') AS j
    FROM read_parquet($files)
)
