-- Every check the warehouse knows (recon.findings.listing): a `--check` naming none of them
-- is refused with this list instead of listing nothing.
SELECT check_name FROM check_runs
UNION
SELECT check_name FROM findings
ORDER BY check_name
