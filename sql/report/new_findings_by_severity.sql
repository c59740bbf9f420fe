-- Findings of a run that are new tonight (or came back), counted by severity (what an
-- alert gives).
SELECT severity, count(*) AS findings
FROM findings
WHERE run_id = $1 AND state IN ('new', 'reopened')
GROUP BY severity
