-- findings_current: every finding ever raised, in its latest state. A finding (finding_key)
-- that the latest run still reports is new or open; one it no longer reports is resolved
-- (from the run that resolved it). first_seen / last_seen are the runs (and their start)
-- that first and last reported it open; age_days runs from first seen to the latest run's
-- start while it is open, to its last sighting once resolved. work_state (open,
-- investigating, acknowledged, resolved_manually), owner, work_note, work_reason and
-- lapsed_reason: what the team decided on an unresolved finding (view finding_states).
CREATE OR REPLACE VIEW findings_current AS
WITH latest AS (
    SELECT max(started_at) AS latest_at FROM runs
),
seen AS (
    SELECT f.finding_key,
           min(r.started_at) AS first_seen_at, arg_min(f.run_id, r.started_at) AS first_seen_run,
           max(r.started_at) AS last_seen_at, arg_max(f.run_id, r.started_at) AS last_seen_run
    FROM findings AS f JOIN runs AS r USING (run_id)
    WHERE f.state IN ('new', 'open')
    GROUP BY f.finding_key
),
last_row AS (
    SELECT f.*, r.started_at AS row_at
    FROM findings AS f JOIN runs AS r USING (run_id)
    QUALIFY row_number() OVER (PARTITION BY f.finding_key ORDER BY r.started_at DESC, f.run_id DESC) = 1
)
SELECT
    l.finding_key, l.check_name, l.severity,
    CASE WHEN l.state IN ('new', 'open') AND l.row_at < t.latest_at THEN 'resolved' ELSE l.state END AS state,
    l.entity, l.entity_id, l.currency, l.amount_minor, money(l.amount_minor, l.currency) AS amount,
    l.issue_type, l.detail,
    s.first_seen_run, s.first_seen_at, s.last_seen_run, s.last_seen_at,
    date_diff('day', s.first_seen_at,
              CASE WHEN l.state IN ('new', 'open') AND l.row_at = t.latest_at THEN t.latest_at ELSE s.last_seen_at END) AS age_days,
    l.run_id AS state_run,
    w.work_state, w.owner, w.work_note, w.work_reason, w.lapsed_reason
FROM last_row AS l
CROSS JOIN latest AS t
LEFT JOIN seen AS s USING (finding_key)
LEFT JOIN finding_states AS w
    ON w.run_id = l.run_id AND w.finding_key = l.finding_key
    AND l.state IN ('new', 'open') AND l.row_at = t.latest_at;
