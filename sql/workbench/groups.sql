-- The queue's groups (recon.workbench.queue): per check of the latest loaded run, how many
-- unresolved findings and their severity; the page's headings.
WITH latest AS (
    SELECT run_id FROM runs WHERE loaded_at IS NOT NULL ORDER BY started_at DESC LIMIT 1
)
SELECT f.check_name, any_value(f.severity) AS severity, count(*) AS findings
FROM findings AS f JOIN latest USING (run_id)
WHERE f.state IN ('new', 'open', 'reopened')
GROUP BY f.check_name
ORDER BY f.check_name
