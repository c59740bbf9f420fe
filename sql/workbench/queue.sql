-- The workbench's queue (recon.workbench.queue): the latest loaded run's unresolved findings
-- with their work state as the audit trail decides it now (the trail's latest work event per
-- key is registered as `trail_work` by the caller; recon.findings.work.judge says the same in
-- Python), their two ages and due date; filtered, then one page by keyset (check_name,
-- finding_key) after $after_check / $after_key. Every filter is NULL when not asked for.
WITH latest AS (
    SELECT run_id, started_at FROM runs WHERE loaded_at IS NOT NULL
    ORDER BY started_at DESC LIMIT 1
),
judged AS (
    SELECT
        f.finding_key, f.check_name, f.severity, f.state, f.entity, f.entity_id, f.currency,
        f.amount_minor, f.detail, f.item_at, r.started_at AS first_seen_at, l.started_at AS latest_at,
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
    LEFT JOIN runs AS r ON r.run_id = f.first_seen_run
    LEFT JOIN trail_work AS w ON w.finding_key = f.finding_key
    WHERE f.state IN ('new', 'open', 'reopened')
      AND ($key IS NULL OR f.finding_key = $key)
      AND ($check IS NULL OR f.check_name = $check)
      AND ($currency IS NULL OR upper(f.currency) = upper($currency))
      AND ($severity IS NULL OR f.severity = $severity)
      AND ($amount_min IS NULL OR f.amount_minor >= $amount_min)
      AND ($amount_max IS NULL OR f.amount_minor <= $amount_max)
      AND ($after_check IS NULL OR (f.check_name, f.finding_key) > ($after_check, $after_key))
),
shaped AS (
    SELECT
        *,
        CASE WHEN decided = 'open' AND state IN ('new', 'reopened') THEN state ELSE decided END
            AS work_state,
        date_diff('day', first_seen_at, latest_at) AS known_days,
        date_diff('day', item_at, latest_at) AS item_age_days,
        first_seen_at + to_days(CAST(CASE severity
            WHEN 'error' THEN $sla_error WHEN 'warn' THEN $sla_warn ELSE $sla_info END AS INTEGER))
            AS due_at
    FROM judged
)
SELECT finding_key, check_name, severity, currency, amount_minor, work_state, owner,
       known_days, item_age_days, due_at, entity, entity_id, detail
FROM shaped
WHERE ($state IS NULL
       OR ($state = 'open' AND decided <> 'resolved_manually')
       OR work_state = $state
       OR ($state = 'unworked' AND decided = 'open'))
  AND ($owner IS NULL OR owner = $owner)
  AND ($known_min IS NULL OR known_days >= $known_min)
  AND ($known_max IS NULL OR known_days <= $known_max)
  AND ($item_min IS NULL OR item_age_days >= $item_min)
  AND ($item_max IS NULL OR item_age_days <= $item_max)
  AND ($overdue IS NULL OR (due_at < $now) = $overdue)
ORDER BY check_name, finding_key
LIMIT $limit
