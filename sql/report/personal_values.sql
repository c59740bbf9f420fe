-- Personal values quoted in a finding's detail (recon.report.privacy): for each finding of
-- the run, the string values of personal keys ($pattern, one capture group) in the raw
-- record the finding is about, kept only when the detail contains one. Almost always empty;
-- the report removes whatever it returns from that finding's detail.
-- Read a range of the run's findings at a time ($lo, $hi: their rowids; $entities: those
-- live_records holds, the only ones with a record to read), so that a million findings are
-- never joined with every record at once (it ran out of a report's 64 MiB, issue 38).
WITH tonight AS (
    SELECT finding_key, entity, entity_id, detail
    FROM findings
    WHERE run_id = $run_id AND detail IS NOT NULL AND rowid BETWEEN $lo AND $hi
      AND list_contains($entities, entity)
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
