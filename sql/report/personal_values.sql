-- Personal values quoted in a finding's detail (recon.report.privacy): for each finding of
-- the run, the string values of personal keys ($pattern, one capture group) in the raw
-- record the finding is about, kept only when the detail contains one. Almost always empty;
-- the report removes whatever it returns from that finding's detail.
WITH tonight AS (
    SELECT finding_key, entity, entity_id, detail
    FROM findings
    WHERE run_id = $run_id AND detail IS NOT NULL
),
records AS (
    SELECT 'payment' AS entity, id, raw FROM payments
    UNION ALL SELECT 'refund', id, raw FROM refunds
    UNION ALL SELECT 'dispute', id, raw FROM disputes
    UNION ALL SELECT 'invoice', id, raw FROM invoices
    UNION ALL SELECT 'subscription', id, raw FROM subscriptions
    UNION ALL SELECT 'payment_intent', id, raw FROM payment_intents
    UNION ALL SELECT 'payment_method', id, raw FROM payment_methods
),
quoted AS (
    SELECT t.finding_key, t.detail,
           unnest(regexp_extract_all(CAST(r.raw AS VARCHAR), $pattern, 1)) AS value
    FROM tonight AS t
    JOIN records AS r ON r.entity = t.entity AND r.id = t.entity_id
)
SELECT DISTINCT finding_key, value
FROM quoted
WHERE length(value) >= $min_length AND length(replace(detail, value, '')) <> length(detail)
ORDER BY finding_key, value
