-- The findings lifecycle of one run, in four statements separated by `-- statement` lines.
-- Inputs (temp tables filled by recon.checks.runner):
--   _recon_status(check_name, severity, status, reason, description, finding_count, duration_ms)
--   _recon_results(check_name, entity, entity_id, currency, amount_minor, issue_type, detail)
-- Parameters: $run_id, $as_of.
--
-- Opening set of a check = its `new`/`open` findings in the latest earlier run that has a
-- check_runs row for it. Tonight, per check:
--   evaluated (passed/failed): found keys are `new` (not in the opening set) or `open`
--     (carrying first_seen_run); opening keys not found are `resolved` — unless the
--     finding's entity comes from a resource whose scan is not complete tonight (checks that
--     evaluate per resource), which stay `open`;
--   not_evaluated / errored: the opening set is carried forward unchanged as `open`; nothing
--     is resolved.
-- So, per check: opening + new - resolved = closing (closing = new + open).
-- statement
CREATE OR REPLACE TEMP TABLE _recon_opening AS
WITH this_run AS (
    SELECT coalesce((SELECT started_at FROM runs WHERE run_id = $run_id), $as_of) AS started_at
),
previous AS (
    SELECT cr.check_name, arg_max(cr.run_id, r.started_at) AS run_id
    FROM check_runs AS cr
    JOIN runs AS r ON r.run_id = cr.run_id
    WHERE cr.run_id <> $run_id
      AND r.started_at < (SELECT started_at FROM this_run)
      AND cr.check_name IN (SELECT check_name FROM _recon_status)
    GROUP BY cr.check_name
)
SELECT f.*
FROM findings AS f
JOIN previous AS p ON p.run_id = f.run_id AND p.check_name = f.check_name
WHERE f.state IN ('new', 'open')
-- statement
DELETE FROM findings
WHERE run_id = $run_id AND check_name IN (SELECT check_name FROM _recon_status)
-- statement
DELETE FROM check_runs
WHERE run_id = $run_id AND check_name IN (SELECT check_name FROM _recon_status)
-- statement
INSERT INTO findings (
    run_id, check_name, severity, finding_key, state, entity, entity_id, currency,
    amount_minor, issue_type, detail, first_seen_run
)
WITH tonight AS (
    SELECT r.*, r.check_name || ':' || r.entity_id || ':' || r.issue_type AS finding_key
    FROM _recon_results AS r
    JOIN _recon_status AS s ON s.check_name = r.check_name
    WHERE s.status IN ('passed', 'failed')
),
complete AS (
    SELECT resource FROM resource_scans WHERE run_id = $run_id AND status = 'complete'
)
SELECT
    $run_id, t.check_name, s.severity, t.finding_key,
    CASE WHEN o.finding_key IS NULL THEN 'new' ELSE 'open' END,
    t.entity, t.entity_id, t.currency, t.amount_minor, t.issue_type, t.detail,
    coalesce(o.first_seen_run, $run_id)
FROM tonight AS t
JOIN _recon_status AS s ON s.check_name = t.check_name
LEFT JOIN _recon_opening AS o ON o.check_name = t.check_name AND o.finding_key = t.finding_key
UNION ALL
SELECT
    $run_id, o.check_name, s.severity, o.finding_key,
    CASE WHEN s.status IN ('passed', 'failed')
          AND (NOT list_contains(
                   ['payments', 'refunds', 'disputes', 'subscriptions', 'invoices',
                    'payment_intents', 'payment_methods'],
                   o.entity || 's')
               OR o.entity || 's' IN (SELECT resource FROM complete))
         THEN 'resolved' ELSE 'open' END,
    o.entity, o.entity_id, o.currency, o.amount_minor, o.issue_type, o.detail, o.first_seen_run
FROM _recon_opening AS o
JOIN _recon_status AS s ON s.check_name = o.check_name
ANTI JOIN tonight AS t ON t.check_name = o.check_name AND t.finding_key = o.finding_key
-- statement
INSERT INTO check_runs (
    run_id, check_name, severity, status, reason, description, finding_count,
    opening_count, new_count, resolved_count, closing_count, duration_ms
)
WITH opening AS (
    SELECT check_name, count(*) AS n FROM _recon_opening GROUP BY check_name
),
states AS (
    SELECT
        check_name,
        count(*) FILTER (WHERE state = 'new') AS new_count,
        count(*) FILTER (WHERE state = 'resolved') AS resolved_count,
        count(*) FILTER (WHERE state IN ('new', 'open')) AS closing_count
    FROM findings
    WHERE run_id = $run_id AND check_name IN (SELECT check_name FROM _recon_status)
    GROUP BY check_name
)
SELECT
    $run_id, s.check_name, s.severity, s.status, s.reason, s.description, s.finding_count,
    coalesce(o.n, 0), coalesce(st.new_count, 0), coalesce(st.resolved_count, 0),
    coalesce(st.closing_count, 0), s.duration_ms
FROM _recon_status AS s
LEFT JOIN opening AS o ON o.check_name = s.check_name
LEFT JOIN states AS st ON st.check_name = s.check_name
