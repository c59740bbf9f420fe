-- Findings the checks resolved during the period: the last run of the period that still
-- reported them open, and the run after it (the one that no longer did), with the amount
-- they were resolved at. Steps, and parts ($part of $parts), as in rollforward_items.sql;
-- recon.close.period orders the rows (family, currency, check, key, when resolved).
WITH open_rows AS (
    SELECT f.finding_key, f.check_name, f.severity, f.entity, f.entity_id, f.currency,
           f.amount_minor, f.detail, f.first_seen_run, s.step, s.run_id
    FROM findings AS f JOIN close_steps AS s USING (run_id)
    WHERE f.state IN ('new', 'open', 'reopened') AND hash(f.finding_key) % $parts = $part
),
linked AS (
    SELECT *, lead(step) OVER w AS next_step, lead(currency) OVER w AS next_currency
    FROM open_rows
    WINDOW w AS (PARTITION BY finding_key ORDER BY step)
)
SELECT
    coalesce(fam.family, 'other') AS family, l.check_name, l.severity, l.finding_key,
    l.entity, l.entity_id, l.currency, l.amount_minor, l.detail, l.first_seen_run,
    l.run_id AS last_open_run, nxt.run_id AS resolved_in_run, nxt.started_at AS resolved_at
FROM linked AS l
JOIN close_steps AS nxt ON nxt.step = l.step + 1
LEFT JOIN close_families AS fam USING (check_name)
WHERE (l.next_step IS NULL AND l.step < $last_step) OR l.next_step > l.step + 1
   OR (l.next_step = l.step + 1 AND l.next_currency IS DISTINCT FROM l.currency)
