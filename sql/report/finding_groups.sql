-- The (check, currency) groups of the run's unresolved findings (recon.report.data): the
-- report lists the largest findings of each group with sql/report/top_findings.sql, one
-- bounded Top-N per group instead of a window over every finding (a million findings
-- under a 64 MiB memory limit, issue 38).
SELECT check_name, currency, count(*)::BIGINT AS findings
FROM findings
WHERE run_id = $run_id AND state <> 'resolved'
GROUP BY ALL
ORDER BY check_name, currency NULLS LAST
