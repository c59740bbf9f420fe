-- The order of findings.csv, findings.parquet and the explorer (recon.report): the rowids of
-- the run's findings by check, entity id and issue. Only the keys are sorted (DuckDB spills
-- past its limit); sql/report/findings.sql then reads the rows a batch of rowids at a time:
-- a million findings sorted with their details did not fit a report's 64 MiB (issue 38).
SELECT f.rowid AS rid
FROM findings AS f
WHERE f.run_id = $run_id
ORDER BY f.check_name, f.entity_id, f.issue_type, f.finding_key
