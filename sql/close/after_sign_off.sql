-- Items dated in a signed-off period that a night changed after the sign-off: per period
-- whose latest `close` line in the audit trail (finding_acks) stands (no `reopen` after it),
-- the provider records created inside it that a run started after the sign-off and by
-- $upto first saw, changed, lost or saw return (record_versions), and those runs. $run_id:
-- that one run only (its report); NULL: every such run (the next close).
WITH marks AS (
    SELECT replace(finding_key, 'period:', '') AS period, action, acted_at
    FROM finding_acks
    WHERE action IN ('close', 'reopen') AND starts_with(finding_key, 'period:')
    QUALIFY row_number() OVER (PARTITION BY finding_key ORDER BY seq DESC) = 1
),
signed AS (
    SELECT period, acted_at AS signed_at,
           CAST(strptime(period || '-01', '%Y-%m-%d') AS TIMESTAMP) AT TIME ZONE 'UTC' AS period_start
    FROM marks
    WHERE action = 'close' AND regexp_full_match(period, '\d{4}-\d{2}')
)
SELECT
    s.period,
    s.signed_at,
    CAST(count(DISTINCT (v.entity, v.id)) AS BIGINT) AS items,
    list(DISTINCT v.run_id ORDER BY v.run_id) AS runs
FROM signed AS s
JOIN live_records AS l
    ON l.created_at >= s.period_start AND l.created_at < s.period_start + INTERVAL 1 MONTH
JOIN record_versions AS v ON v.entity = l.resource AND v.id = l.id
JOIN runs AS r ON r.run_id = v.run_id
WHERE r.started_at > s.signed_at
  AND r.started_at <= $upto
  AND ($run_id IS NULL OR v.run_id = $run_id)
GROUP BY s.period, s.signed_at
ORDER BY s.period
