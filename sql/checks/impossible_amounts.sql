-- name: impossible_amounts
-- description: A payment, refund, invoice, dispute or intent whose amount is negative or not a JSON integer, or whose currency is not an ISO 4217 code.
-- severity: error
-- requires: []
-- per_resource: every resource with amount
-- tolerates: every resource with amount
-- requires_fields: ["*.amount", "*.currency"]
-- tags: [amounts, currency]
-- # Evaluated per resource, over the records read tonight (recon hides a resource it leaves
-- # out, e.g. disputes when no dispute carries the mapped `amount`: see docs/checks.md).
WITH paths AS (
    -- Where each resource's amount and currency are in the raw record (money_paths, from the
    -- catalogue), a mapped field ([fields.*] in recon.toml) at the path tonight's load read it
    -- (field_presence), to word a value the loader could not type.
    SELECT p.resource, p.column_name, coalesce(f.json_path, p.default_path) || p.suffix AS json_path
    FROM money_paths AS p
    LEFT JOIN (
        SELECT resource, field, max(json_path) AS json_path
        FROM field_presence WHERE run_id = $run_id GROUP BY resource, field
    ) AS f ON f.resource = p.resource AND f.field = p.field
),
amounts AS (
    -- The JSON value is read only where the typed column is NULL (the loader types a value
    -- of the wrong JSON type as NULL and keeps `raw`), so this stays cheap on big tables.
    SELECT r.entity, r.resource, r.id, r.amount_minor, r.currency,
           CASE WHEN r.amount_minor IS NULL THEN json_extract(r.raw, a.json_path) END AS amount_json,
           CASE WHEN r.currency IS NULL THEN json_extract(r.raw, c.json_path) END AS currency_json
    FROM live_records AS r
    JOIN paths AS a ON a.resource = r.resource AND a.column_name = 'amount_minor'
    JOIN paths AS c ON c.resource = r.resource AND c.column_name = 'currency'
    WHERE r.gone_in_run IS NULL
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
