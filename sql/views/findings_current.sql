-- findings_current: every finding ever raised, in its latest state. A finding (finding_key)
-- that the latest run still reports is new, reopened or open; one it no longer reports is
-- resolved (from the run that resolved it). first_seen / last_seen are the runs (and their
-- start) that first and last reported it — a finding that came back keeps its first sighting
-- (reopen_count: how many times it came back).
-- The two ages, named the same everywhere (recon findings list, exports, explorer):
--   item_age_days  how old the item is: its own business date (the order's, payment's,
--                  refund's or invoice's; item_at) to the latest run's start
--   known_days     how long recon has known the break: first seen to the latest run's start
--                  while it is unresolved, to its last sighting once resolved
-- age_days is known_days under its earlier name.
-- work_state (open, investigating, acknowledged, resolved_manually), owner, work_note,
-- work_reason and lapsed_reason: what the team decided on an unresolved finding (view
-- finding_states).
CREATE OR REPLACE VIEW findings_current AS
WITH latest AS (
    SELECT max(started_at) AS latest_at FROM runs
),
seen AS (
    SELECT f.finding_key,
           min(r.started_at) AS first_seen_at, arg_min(f.run_id, r.started_at) AS first_seen_run,
           max(r.started_at) AS last_seen_at, arg_max(f.run_id, r.started_at) AS last_seen_run
    FROM findings AS f JOIN runs AS r USING (run_id)
    WHERE f.state IN ('new', 'open', 'reopened')
    GROUP BY f.finding_key
),
last_row AS (
    SELECT f.*, r.started_at AS row_at
    FROM findings AS f JOIN runs AS r USING (run_id)
    QUALIFY row_number() OVER (PARTITION BY f.finding_key ORDER BY r.started_at DESC, f.run_id DESC) = 1
),
aged AS (
    SELECT
        l.* EXCLUDE (first_seen_run), s.first_seen_run, s.first_seen_at, s.last_seen_run, s.last_seen_at,
        l.state IN ('new', 'open', 'reopened') AND l.row_at = t.latest_at AS unresolved,
        t.latest_at
    FROM last_row AS l
    CROSS JOIN latest AS t
    LEFT JOIN seen AS s USING (finding_key)
)
SELECT
    a.finding_key, a.check_name, a.severity,
    CASE WHEN NOT a.unresolved AND a.state <> 'resolved' THEN 'resolved' ELSE a.state END AS state,
    a.entity, a.entity_id, a.currency, a.amount_minor, money(a.amount_minor, a.currency) AS amount,
    a.issue_type, a.detail,
    a.first_seen_run, a.first_seen_at, a.last_seen_run, a.last_seen_at,
    date_diff('day', a.first_seen_at, CASE WHEN a.unresolved THEN a.latest_at ELSE a.last_seen_at END) AS age_days,
    a.run_id AS state_run,
    w.work_state, w.owner, w.work_note, w.work_reason, w.lapsed_reason,
    coalesce(a.reopen_count, 0) AS reopen_count,
    a.item_at,
    date_diff('day', a.item_at, CASE WHEN a.unresolved THEN a.latest_at ELSE a.last_seen_at END) AS item_age_days,
    date_diff('day', a.first_seen_at, CASE WHEN a.unresolved THEN a.latest_at ELSE a.last_seen_at END) AS known_days
FROM aged AS a
LEFT JOIN finding_states AS w
    ON w.run_id = a.run_id AND w.finding_key = a.finding_key AND a.unresolved;
