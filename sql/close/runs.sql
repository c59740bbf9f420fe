-- The runs a period's close reads ($period_start <= started_at < $period_end, UTC), with the
-- opening run (the last loaded run started before the period) first as step 0. Each run's
-- step n orders them; the cut-off run is the one with the largest step.
WITH loaded AS (
    SELECT run_id, started_at, status, reason FROM runs
    WHERE loaded_at IS NOT NULL AND started_at < $period_end
),
opening AS (
    SELECT * FROM loaded WHERE started_at < $period_start
    ORDER BY started_at DESC LIMIT 1
),
inside AS (
    SELECT * FROM loaded WHERE started_at >= $period_start
)
SELECT run_id, started_at, status, reason, 0 AS step, true AS opening FROM opening
UNION ALL
SELECT run_id, started_at, status, reason,
       CAST(row_number() OVER (ORDER BY started_at, run_id) AS INTEGER) AS step, false AS opening
FROM inside
ORDER BY step
