-- What the team decided on the run's findings, where it is not the default (recon.report.render):
-- the default, for a finding nobody worked, is work_state 'open' while the finding is new,
-- open or reopened, NULL once the checks resolved it, and no owner, note, reason or lapse
-- (view finding_states). Read whole, without a sort, before the findings are streamed: one
-- query at a time within DuckDB's memory limit (a join of every finding with the view
-- beside the sort of sql/report/findings.sql did not fit 64 MiB at 130k findings, issue 38).
SELECT finding_key, work_state, owner, work_note, work_reason, lapsed_reason
FROM finding_states
WHERE run_id = $run_id
  AND (work_state <> 'open' OR owner IS NOT NULL OR work_note IS NOT NULL
       OR work_reason IS NOT NULL OR lapsed_reason IS NOT NULL)
