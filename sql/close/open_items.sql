-- Findings open at the period's cut-off: the unresolved findings of the last run of the
-- period ($cutoff_run), with the run (and time) that first saw them; known_days measured to
-- the cut-off run's start ($cutoff_at): 0 for a break first seen by the cut-off run.
-- recon.close.period orders the rows (family, currency, largest first, key).
SELECT
    coalesce(fam.family, 'other') AS family, f.check_name, f.severity, f.finding_key,
    f.entity, f.entity_id, f.currency, f.amount_minor, f.issue_type, f.detail,
    f.first_seen_run, fr.started_at AS first_seen_at,
    date_diff('day', fr.started_at, $cutoff_at) AS known_days
FROM findings AS f
LEFT JOIN runs AS fr ON fr.run_id = f.first_seen_run
LEFT JOIN close_families AS fam USING (check_name)
WHERE f.run_id = $cutoff_run AND f.state IN ('new', 'open', 'reopened')
