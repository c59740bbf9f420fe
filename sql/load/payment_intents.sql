-- Stage landed payment intents (`captureMethod` and `amount` are recon's names for the spec's
-- unnamed enum and integer fields).
SELECT
    id,
    raw::JSON AS raw,
    md5(raw) AS content_hash,
    page_offset,
    j.status AS status,
    j.captureMethod AS capture_method,
    CASE WHEN json_type(j.amount) IN ('BIGINT', 'UBIGINT')
         THEN TRY_CAST(j.amount::VARCHAR AS BIGINT) END AS amount_minor,
    j.currency AS currency,
    TRY_CAST(j.createdAt AS TIMESTAMPTZ) AS created_at
FROM (
    SELECT id, raw, page_offset, json_transform(raw,
        '{"status":"VARCHAR","captureMethod":"VARCHAR","amount":"JSON","currency":"VARCHAR","createdAt":"VARCHAR"}') AS j
    FROM read_parquet($files)
)
