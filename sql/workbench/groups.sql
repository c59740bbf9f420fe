-- The queue's groups (recon.workbench.queue): per check of the latest loaded run and root
-- cause (the macro of sql/workbench/root_cause.sql), how many unresolved findings and their
-- severity; the page's headings. Counted per (check, issue_type) first: the macro runs once
-- per group, not once per finding.
WITH latest AS (
    SELECT run_id FROM runs WHERE loaded_at IS NOT NULL ORDER BY started_at DESC LIMIT 1
),
issues AS (
    SELECT f.check_name, f.issue_type, any_value(f.severity) AS severity, count(*) AS findings
    FROM findings AS f JOIN latest USING (run_id)
    WHERE f.state IN ('new', 'open', 'reopened')
    GROUP BY f.check_name, f.issue_type
)
SELECT check_name, any_value(severity) AS severity,
       recon_root_cause(check_name, issue_type) AS root_cause, sum(findings) AS findings
FROM issues
GROUP BY check_name, root_cause
ORDER BY check_name, root_cause
