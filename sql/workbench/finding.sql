-- One unresolved finding of the latest loaded run, by key (recon.workbench.service).
WITH latest AS (
    SELECT run_id, started_at FROM runs WHERE loaded_at IS NOT NULL
    ORDER BY started_at DESC LIMIT 1
)
SELECT f.finding_key, f.check_name, f.severity, f.state, f.entity, f.entity_id, f.currency,
       f.amount_minor, f.issue_type, f.detail, f.item_at, r.started_at AS first_seen_at,
       l.started_at AS latest_at
FROM findings AS f
JOIN latest AS l USING (run_id)
LEFT JOIN runs AS r ON r.run_id = f.first_seen_run
WHERE f.finding_key = $key AND f.state IN ('new', 'open', 'reopened')
