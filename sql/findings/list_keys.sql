-- The rowids of sql/findings/list.sql's rows (recon.findings.listing): the caller adds the
-- ORDER BY of the order asked for, sorts only these keys (DuckDB spills past its limit),
-- then reads the rows a batch at a time with sql/findings/list_rows.sql: a million findings
-- sorted with their details did not fit a command's 64 MiB (issue 38).
SELECT f.rowid AS rid
FROM findings AS f
LEFT JOIN runs AS r ON r.run_id = f.first_seen_run
WHERE f.run_id = $run AND f.state IN ('new', 'open', 'reopened')
  AND ($check IS NULL OR f.check_name = $check)
