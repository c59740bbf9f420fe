-- The latest run's unresolved findings for `recon findings` (recon.findings.listing), with
-- when recon first saw each (`started_at` of its first run: how long the break is known) and
-- the item's own date. $check narrows to one check (NULL: every check). The caller adds the
-- ORDER BY of the order asked for and reads the rows in batches.
SELECT f.run_id, f.finding_key, f.check_name, f.severity, f.state, f.entity,
       f.entity_id, f.currency, f.amount_minor, f.issue_type, f.detail,
       f.first_seen_run, r.started_at, f.item_at
FROM findings AS f
LEFT JOIN runs AS r ON r.run_id = f.first_seen_run
WHERE f.run_id = $run AND f.state IN ('new', 'open', 'reopened')
  AND ($check IS NULL OR f.check_name = $check)
