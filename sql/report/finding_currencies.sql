-- The currencies of the run's findings (recon.report.render): the scale of findings.csv's and
-- findings.parquet's `amount` column, fixed before the findings are written in batches.
SELECT DISTINCT currency FROM findings WHERE run_id = $run_id AND currency IS NOT NULL
