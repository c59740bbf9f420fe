-- Personal values quoted in a finding's detail (recon.report.privacy): for each finding of
-- the run, the string values of personal keys ($pattern, one capture group) in the raw
-- record the finding is about, kept only when the detail contains one. Almost always empty;
-- the report removes whatever it returns from that finding's detail.
WITH tonight AS (
    SELECT finding_key, entity, entity_id, detail
    FROM findings
    WHERE run_id = $run_id AND detail IS NOT NULL
),
quoted AS (
    -- live_records: every record of every resource in the catalogue (recon.warehouse.catalogue_views)
    SELECT t.finding_key, t.detail,
           unnest(regexp_extract_all(CAST(r.raw AS VARCHAR), $pattern, 1)) AS value
    FROM tonight AS t
    JOIN live_records AS r ON r.entity = t.entity AND r.id = t.entity_id
)
SELECT DISTINCT finding_key, value
FROM quoted
WHERE length(value) >= $min_length AND length(replace(detail, value, '')) <> length(detail)
ORDER BY finding_key, value
