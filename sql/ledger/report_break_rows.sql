-- The open breaks of run $run_id (recon.report.ledger reads them a batch at a time with
-- sql/ledger/report_breaks.sql): the ledger checks' unresolved findings but the pending ones.
SELECT rowid AS rid
FROM findings
WHERE run_id = $run_id
  AND starts_with(check_name, 'ledger_') AND check_name <> 'ledger_pending'
  AND state IN ('new', 'open', 'reopened')
