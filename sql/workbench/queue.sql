-- The workbench's queue (recon.workbench.queue): the latest loaded run's unresolved findings
-- with their work state as the audit trail decides it now (the trail's latest work event per
-- key is registered as `trail_work` by the caller; recon.findings.work.judge says the same in
-- Python), their two ages, due date and root cause (the macro of
-- sql/workbench/root_cause.sql); filtered, then one page by keyset (check_name,
-- finding_key) after $after_check / $after_key. Every filter is NULL when not asked for.
-- At a million findings the per-row work is kept to comparisons: the ages and due dates that
-- depend on the run are computed per run (a few rows) and joined; the item's own age is
-- filtered through a timestamp bound and computed for the page's rows only.
WITH latest AS (
    SELECT run_id, started_at, CAST(started_at AS DATE) AS latest_day FROM runs
    WHERE loaded_at IS NOT NULL ORDER BY started_at DESC LIMIT 1
),
seen AS (  -- per run that first saw a finding: its start, the days known, the due dates
    SELECT r.run_id AS first_seen_run, r.started_at AS first_seen_at,
           date_diff('day', r.started_at, l.started_at) AS known_days,
           r.started_at + to_days(CAST($sla_error AS INTEGER)) AS due_error,
           r.started_at + to_days(CAST($sla_warn AS INTEGER)) AS due_warn,
           r.started_at + to_days(CAST($sla_info AS INTEGER)) AS due_info
    FROM runs AS r CROSS JOIN latest AS l
),
bounds AS (  -- item_age_days >= N  <=>  the item's day is N days or more before the latest
    SELECT
        CAST(latest_day - CAST($item_min AS INTEGER) + 1 AS TIMESTAMPTZ) AS item_before,
        CAST(latest_day - CAST($item_max AS INTEGER) AS TIMESTAMPTZ) AS item_from
    FROM latest
),
judged AS (
    SELECT
        f.finding_key, f.check_name, f.severity, f.state, f.entity, f.entity_id, f.currency,
        f.amount_minor, f.issue_type, f.detail, f.item_at, s.known_days,
        CASE f.severity WHEN 'error' THEN s.due_error WHEN 'warn' THEN s.due_warn
             ELSE s.due_info END AS due_at,
        w.owner,
        CASE
            WHEN w.action IS NULL OR w.action = 'unack' THEN 'open'
            WHEN w.action = 'assign' THEN CASE WHEN w.event_owner IS NULL THEN 'open' ELSE 'investigating' END
            WHEN w.currency IS DISTINCT FROM f.currency
                 OR w.amount_minor IS DISTINCT FROM f.amount_minor
                 OR w.sides IS DISTINCT FROM (CASE WHEN starts_with(f.check_name, 'ledger_') THEN f.detail END)
                THEN 'open'
            WHEN w.action = 'ack' AND w.until < $today THEN 'open'
            WHEN w.action = 'ack' THEN 'acknowledged'
            WHEN w.action = 'resolve' THEN 'resolved_manually'
            ELSE 'open'
        END AS decided
    FROM findings AS f
    JOIN latest AS l USING (run_id)
    CROSS JOIN bounds AS b
    LEFT JOIN seen AS s USING (first_seen_run)
    LEFT JOIN trail_work AS w ON w.finding_key = f.finding_key
    WHERE f.state IN ('new', 'open', 'reopened')
      AND ($key IS NULL OR f.finding_key = $key)
      AND ($check IS NULL OR f.check_name = $check)
      AND ($currency IS NULL OR f.currency = upper($currency))
      AND ($severity IS NULL OR f.severity = $severity)
      AND ($cause IS NULL OR recon_root_cause(f.check_name, f.issue_type) = $cause)
      AND ($amount_min IS NULL OR f.amount_minor >= $amount_min)
      AND ($amount_max IS NULL OR f.amount_minor <= $amount_max)
      AND ($item_min IS NULL OR f.item_at < b.item_before)
      AND ($item_max IS NULL OR f.item_at >= b.item_from)
      AND ($after_check IS NULL OR (f.check_name, f.finding_key) > ($after_check, $after_key))
),
page AS (
    SELECT
        *,
        CASE WHEN decided = 'open' AND state IN ('new', 'reopened') THEN state ELSE decided END
            AS work_state
    FROM judged
    WHERE ($state IS NULL
           OR ($state = 'open' AND decided <> 'resolved_manually')
           OR ($state = 'unworked' AND decided = 'open')
           OR (CASE WHEN decided = 'open' AND state IN ('new', 'reopened') THEN state ELSE decided END) = $state)
      AND ($owner IS NULL OR owner = $owner)
      AND ($known_min IS NULL OR known_days >= $known_min)
      AND ($known_max IS NULL OR known_days <= $known_max)
      AND ($overdue IS NULL OR (due_at < $now) = $overdue)
    ORDER BY check_name, finding_key
    LIMIT $limit
)
SELECT p.finding_key, p.check_name, p.severity, p.currency, p.amount_minor, p.work_state,
       p.owner, p.known_days, date_diff('day', p.item_at, l.started_at) AS item_age_days,
       p.due_at, p.entity, p.entity_id, p.detail,
       recon_root_cause(p.check_name, p.issue_type) AS root_cause
FROM page AS p CROSS JOIN latest AS l
ORDER BY p.check_name, p.finding_key
