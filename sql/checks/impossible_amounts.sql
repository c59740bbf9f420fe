-- name: impossible_amounts
-- description: A payment, refund, invoice, dispute or intent whose amount is negative or not a JSON integer, or whose currency is not an ISO 4217 code.
-- severity: error
-- requires: []
-- per_resource: [payments, refunds, invoices, disputes, payment_intents]
-- tolerates: [payments, refunds, invoices, disputes, payment_intents]
-- requires_fields: [disputes.amount, payment_intents.amount, payment_intents.currency]
-- tags: [amounts, currency]
-- # Evaluated per resource, over the records read tonight (recon hides a resource it leaves
-- # out, e.g. disputes when no dispute carries the mapped `amount`: see docs/checks.md).
WITH mapped AS (
    -- Where tonight's load read the fields the spec does not show ([fields.*] in recon.toml;
    -- field_presence records the paths), to word a value the loader could not type.
    SELECT
        coalesce(max(json_path) FILTER (WHERE resource = 'disputes' AND field = 'amount'), '$.amount') AS dispute_money,
        coalesce(max(json_path) FILTER (WHERE resource = 'payment_intents' AND field = 'amount'), '$.amount') AS intent_amount,
        coalesce(max(json_path) FILTER (WHERE resource = 'payment_intents' AND field = 'currency'), '$.currency') AS intent_currency
    FROM field_presence WHERE run_id = $run_id
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
           CASE WHEN amount_minor IS NULL THEN json_extract(json_extract(raw, m.dispute_money), '$.amountMinor') END,
           CASE WHEN currency IS NULL THEN json_extract(json_extract(raw, m.dispute_money), '$.currency') END
    FROM disputes, mapped AS m WHERE gone_in_run IS NULL
    UNION ALL
    SELECT 'payment_intent', 'payment_intents', id, amount_minor, currency,
           CASE WHEN amount_minor IS NULL THEN json_extract(raw, m.intent_amount) END,
           CASE WHEN currency IS NULL THEN json_extract(raw, m.intent_currency) END
    FROM payment_intents, mapped AS m WHERE gone_in_run IS NULL
)
SELECT
    s.entity, s.id AS entity_id, s.currency, s.amount_minor,
    'negative_amount' AS issue_type,
    'negative amount ' || recon_money(s.amount_minor, s.currency) AS detail
FROM amounts AS s
WHERE s.amount_minor < 0
UNION ALL
SELECT
    s.entity, s.id, s.currency, CAST(NULL AS BIGINT),
    'non_integer_amount',
    -- Missing, JSON null, a string, a fraction, a boolean: anything but a JSON integer.
    'amount is not a JSON integer: ' || coalesce(CAST(s.amount_json AS VARCHAR), 'missing')
FROM amounts AS s
WHERE s.amount_minor IS NULL
  AND coalesce(json_type(s.amount_json), 'MISSING') NOT IN ('BIGINT', 'UBIGINT', 'HUGEINT')
UNION ALL
SELECT
    s.entity, s.id, s.currency, s.amount_minor,
    'invalid_currency',
    'currency ' || CASE WHEN s.currency IS NOT NULL THEN '''' || s.currency || ''''
                        ELSE coalesce(CAST(s.currency_json AS VARCHAR), 'missing') END
        || ' is not an ISO 4217 code'
FROM amounts AS s
WHERE s.currency IS NULL OR s.currency NOT IN (SELECT code FROM currencies)
