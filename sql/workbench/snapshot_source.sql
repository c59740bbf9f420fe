-- What the workbench's queue snapshot copies from the published warehouse
-- (recon.workbench.snapshot): the latest loaded run's unresolved findings, the columns the
-- queue reads only.
WITH latest AS (
    SELECT run_id FROM runs WHERE loaded_at IS NOT NULL ORDER BY started_at DESC LIMIT 1
)
SELECT f.run_id, f.finding_key, f.check_name, f.severity, f.state, f.entity, f.entity_id,
       f.currency, f.amount_minor, f.issue_type, f.detail, f.item_at, f.first_seen_run
FROM findings AS f JOIN latest USING (run_id)
WHERE f.state IN ('new', 'open', 'reopened')
