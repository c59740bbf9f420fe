-- Every finding of the run (new, open, resolved) for findings.csv, findings.parquet and the
-- explorer in report.html (recon.report). `age_days`: whole days from the start of the run
-- that first saw the finding to the start of this one; NULL when that run is not known.
-- work_state, owner, work_note, work_reason, lapsed_reason: what the team decided on it, from
-- the audit trail (view finding_states; NULL for a finding the checks resolved).
SELECT
    f.run_id, f.check_name, f.severity, f.state, f.entity, f.entity_id, f.currency,
    f.amount_minor, f.issue_type, f.detail, f.first_seen_run, f.finding_key,
    CAST((epoch(r.started_at) - epoch(fr.started_at)) // 86400 AS INTEGER) AS age_days,
    w.work_state, w.owner, w.work_note, w.work_reason, w.lapsed_reason
FROM findings AS f
JOIN runs AS r ON r.run_id = f.run_id
LEFT JOIN runs AS fr ON fr.run_id = f.first_seen_run
LEFT JOIN finding_states AS w ON w.run_id = f.run_id AND w.finding_key = f.finding_key
WHERE f.run_id = $run_id
ORDER BY f.check_name, f.entity_id, f.issue_type
