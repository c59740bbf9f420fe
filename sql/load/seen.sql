-- Every current row that a slice of tonight's landed batches lists was seen by this run.
-- Run by recon.warehouse.working_copy.mark_seen after the load's transaction has committed, one
-- transaction per slice of batch files ($files, as large as the memory limit allows):
-- DuckDB holds what a transaction updated in memory it cannot spill until the commit, and a
-- night updates every row it lists (1M payments: 2.2M rows), which one transaction cannot
-- hold under the "auto" limit. Rows inserted or replaced tonight carry the run already.
-- Rendered with the allow-listed table name only.
UPDATE {table} SET last_seen_run = $run_id
WHERE id IN (SELECT id FROM read_parquet($files)) AND last_seen_run <> $run_id
