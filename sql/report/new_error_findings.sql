-- Findings of a run that are new tonight, of severity `error` (the count an alert gives).
SELECT count(*)
FROM findings
WHERE run_id = $1 AND state IN ('new', 'reopened') AND severity = 'error'
