-- name: impossible_amounts
-- description: A payment, refund, invoice, dispute or intent whose amount is negative or not a JSON integer, or whose currency is not an ISO 4217 code.
-- severity: error
-- requires: []
-- per_resource: [payments, refunds, invoices, disputes, payment_intents]
-- tags: [amounts, currency]
WITH complete AS (
    -- Evaluated per resource: only the resources whose scan this run is complete.
    SELECT resource FROM resource_scans WHERE run_id = $run_id AND status = 'complete'
),
amounts AS (
    -- The JSON value is read only where the typed column is NULL (the loader types a value
    -- of the wrong JSON type as NULL and keeps `raw`), so this stays cheap on big tables.
    SELECT 'payment' AS entity, 'payments' AS resource, id, amount_minor, currency,
           CASE WHEN amount_minor IS NULL THEN json_extract(raw, '$.amountMinor') END AS amount_json,
           CASE WHEN currency IS NULL THEN json_extract(raw, '$.currency') END AS currency_json
    FROM payments WHERE gone_in_run IS NULL
    UNION ALL
    SELECT 'refund', 'refunds', id, amount_minor, currency,
           CASE WHEN amount_minor IS NULL THEN json_extract(raw, '$.amount.amountMinor') END,
           CASE WHEN currency IS NULL THEN json_extract(raw, '$.amount.currency') END
    FROM refunds WHERE gone_in_run IS NULL
    UNION ALL
    SELECT 'invoice', 'invoices', id, amount_due_minor, currency,
           CASE WHEN amount_due_minor IS NULL THEN json_extract(raw, '$.amountDue.amountMinor') END,
           CASE WHEN currency IS NULL THEN json_extract(raw, '$.amountDue.currency') END
    FROM invoices WHERE gone_in_run IS NULL
    UNION ALL
    SELECT 'dispute', 'disputes', id, amount_minor, currency,
           CASE WHEN amount_minor IS NULL THEN json_extract(raw, '$.amount.amountMinor') END,
           CASE WHEN currency IS NULL THEN json_extract(raw, '$.amount.currency') END
    FROM disputes WHERE gone_in_run IS NULL
    UNION ALL
    SELECT 'payment_intent', 'payment_intents', id, amount_minor, currency,
           CASE WHEN amount_minor IS NULL THEN json_extract(raw, '$.amount') END,
           CASE WHEN currency IS NULL THEN json_extract(raw, '$.currency') END
    FROM payment_intents WHERE gone_in_run IS NULL
),
scoped AS (
    SELECT a.* FROM amounts AS a WHERE a.resource IN (SELECT resource FROM complete)
)
SELECT
    s.entity, s.id AS entity_id, s.currency, s.amount_minor,
    'negative_amount' AS issue_type,
    'negative amount ' || recon_money(s.amount_minor, s.currency) AS detail
FROM scoped AS s
WHERE s.amount_minor < 0
UNION ALL
SELECT
    s.entity, s.id, s.currency, CAST(NULL AS BIGINT),
    'non_integer_amount',
    -- Missing, JSON null, a string, a fraction, a boolean: anything but a JSON integer.
    'amount is not a JSON integer: ' || coalesce(CAST(s.amount_json AS VARCHAR), 'missing')
FROM scoped AS s
WHERE s.amount_minor IS NULL
  AND coalesce(json_type(s.amount_json), 'MISSING') NOT IN ('BIGINT', 'UBIGINT', 'HUGEINT')
UNION ALL
SELECT
    s.entity, s.id, s.currency, s.amount_minor,
    'invalid_currency',
    'currency ' || CASE WHEN s.currency IS NOT NULL THEN '''' || s.currency || ''''
                        ELSE coalesce(CAST(s.currency_json AS VARCHAR), 'missing') END
        || ' is not an ISO 4217 code'
FROM scoped AS s
WHERE s.currency IS NULL OR s.currency NOT IN (SELECT code FROM currencies)
