-- name: vanished_records
-- description: A record that a complete scan in this run no longer lists (it vanished from the provider).
-- severity: warn
-- requires: []
-- per_resource: every resource
-- tags: [history]
-- evaluable_when: SELECT count(*) > 0 FROM resource_scans AS s JOIN runs AS r ON r.run_id = s.run_id WHERE s.run_id <> $run_id AND r.started_at < $as_of AND s.records > 0
-- not_evaluated_reason: "first run: no earlier records to compare with"
WITH gone AS (
    SELECT entity, id, currency, amount_minor, status, last_seen_run
    FROM live_records WHERE gone_in_run = $run_id
)
SELECT
    g.entity,
    g.id AS entity_id,
    g.currency,
    g.amount_minor,
    'vanished' AS issue_type,
    g.entity || ' (' || coalesce(g.status, 'no status')
        || CASE WHEN g.amount_minor IS NOT NULL THEN ', ' || recon_money(g.amount_minor, g.currency) ELSE '' END
        || ') last listed in run ' || g.last_seen_run || ', missing from this run''s complete scan' AS detail
FROM gone AS g
