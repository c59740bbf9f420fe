-- The run's transaction is done: its status from the resources' scans (loaded_at follows
-- once every row it listed is marked seen: run_loaded.sql).
UPDATE runs SET status = $status, reason = $reason WHERE run_id = $run_id
