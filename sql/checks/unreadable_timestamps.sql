-- name: unreadable_timestamps
-- description: A record whose createdAt (or the field mapped to it) is there but is no timestamp recon can read (not a date, an impossible one, an epoch number), or lies more than a year after the run (2099, 9999-12-31); the value is shown as sent.
-- severity: warn
-- requires: []
-- per_resource: [payments, refunds, invoices, disputes, payment_intents, subscriptions]
-- tolerates: [payments, refunds, invoices, disputes, payment_intents, subscriptions]
-- tags: [dates]
-- # Evaluated per resource, over the records read tonight. The loader types an unreadable
-- # timestamp as NULL and keeps `raw`; the JSON value is read only for those and for the
-- # ones past $as_of, so this stays cheap on big tables.
WITH paths AS (
    SELECT resource, max(json_path) AS path
    FROM field_presence WHERE run_id = $run_id AND field = 'created_at'
    GROUP BY resource
),
stamps AS (
    SELECT 'payment' AS entity, 'payments' AS resource, id, created_at, raw FROM payments WHERE gone_in_run IS NULL
    UNION ALL SELECT 'refund', 'refunds', id, created_at, raw FROM refunds WHERE gone_in_run IS NULL
    UNION ALL SELECT 'invoice', 'invoices', id, created_at, raw FROM invoices WHERE gone_in_run IS NULL
    UNION ALL SELECT 'dispute', 'disputes', id, created_at, raw FROM disputes WHERE gone_in_run IS NULL
    UNION ALL SELECT 'payment_intent', 'payment_intents', id, created_at, raw FROM payment_intents WHERE gone_in_run IS NULL
    UNION ALL SELECT 'subscription', 'subscriptions', id, created_at, raw FROM subscriptions WHERE gone_in_run IS NULL
),
suspect AS (
    SELECT s.entity, s.id, s.created_at,
           json_extract(s.raw, coalesce(p.path, '$.createdAt')) AS sent
    FROM stamps AS s LEFT JOIN paths AS p USING (resource)
    WHERE s.created_at IS NULL OR s.created_at > $as_of + INTERVAL 1 YEAR
)
SELECT
    s.entity,
    s.id AS entity_id,
    CAST(NULL AS VARCHAR) AS currency,
    CAST(NULL AS BIGINT) AS amount_minor,
    CASE WHEN s.created_at IS NULL THEN 'unreadable_timestamp' ELSE 'future_timestamp' END AS issue_type,
    CASE WHEN s.created_at IS NULL THEN s.entity || ' createdAt is not a timestamp: '
         ELSE s.entity || ' createdAt lies in the future: ' END || CAST(s.sent AS VARCHAR) AS detail
FROM suspect AS s
WHERE s.sent IS NOT NULL AND json_type(s.sent) <> 'NULL'
