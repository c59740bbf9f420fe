-- The first screen of report.html (recon.report.headline): where the books stand after run
-- $run_id, per currency. The breaks are the run's unresolved findings -- with books
-- ($books = true) only the ledger checks' (not the pending ones), as in "Books vs provider";
-- without books every check's. Open = not acknowledged (finding_states); new = first
-- reported tonight; reopened = came back tonight; resolved = no longer reported tonight. The
-- oldest item is by the item's own business date (findings.item_at), NULL when no break has
-- one; known is how long recon has known the oldest break (from the run that first saw it).
-- One pass over the run's findings: no history is read.
WITH run AS (
    SELECT started_at FROM runs WHERE run_id = $run_id
),
breaks AS (
    SELECT
        f.finding_key, f.state, f.currency, f.amount_minor,
        coalesce(w.work_state IN ('acknowledged', 'resolved_manually'), false) AS acknowledged,
        f.item_at,
        r.started_at AS first_seen_at
    FROM findings AS f
    LEFT JOIN finding_states AS w ON w.run_id = f.run_id AND w.finding_key = f.finding_key
    LEFT JOIN runs AS r ON r.run_id = f.first_seen_run
    WHERE f.run_id = $run_id
      AND (NOT $books OR (starts_with(f.check_name, 'ledger_') AND f.check_name <> 'ledger_pending'))
)
SELECT
    b.currency,
    count(*) FILTER (WHERE b.state <> 'resolved' AND NOT b.acknowledged) AS open,
    count(*) FILTER (WHERE b.state <> 'resolved' AND b.acknowledged) AS acknowledged,
    count(*) FILTER (WHERE b.state = 'new') AS new,
    count(*) FILTER (WHERE b.state = 'reopened') AS reopened,
    count(*) FILTER (WHERE b.state = 'resolved') AS resolved,
    -- HUGEINT: impossible amounts (INT64_MIN, …) are findings too, and their sum must not fail
    coalesce(sum(b.amount_minor::HUGEINT) FILTER (WHERE b.state <> 'resolved' AND NOT b.acknowledged), 0)
        AS at_risk_minor,
    max(date_diff('day', b.item_at, (SELECT started_at FROM run)))
        FILTER (WHERE b.state <> 'resolved') AS oldest_item_days,
    max(date_diff('day', b.first_seen_at, (SELECT started_at FROM run)))
        FILTER (WHERE b.state <> 'resolved') AS known_days
FROM breaks AS b
GROUP BY b.currency
ORDER BY b.currency NULLS LAST
