-- The run's findings (new, open, resolved) for findings.csv, findings.parquet and the explorer
-- in report.html (recon.report): a batch of them at a time, the rowids sql/report/findings_order.sql
-- put in order (registered as report_batch(pos, rid)), in that order. `age_days`: whole days
-- from the start of the run that first saw the finding to the start of this one; NULL when
-- that run is not known. What the team decided on each batch's findings comes from
-- sql/report/finding_work.sql (a join with the view finding_states here held every finding
-- of the run in memory: issue 38).
SELECT
    f.run_id, f.check_name, f.severity, f.state, f.entity, f.entity_id, f.currency,
    f.amount_minor, f.issue_type, f.detail, f.first_seen_run, f.finding_key,
    CAST((epoch(r.started_at) - epoch(fr.started_at)) // 86400 AS INTEGER) AS age_days
FROM report_batch AS b
JOIN findings AS f ON f.rowid = b.rid
JOIN runs AS r ON r.run_id = f.run_id
LEFT JOIN runs AS fr ON fr.run_id = f.first_seen_run
ORDER BY b.pos
