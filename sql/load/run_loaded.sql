-- The run is loaded: its status from the resources' scans, and when.
UPDATE runs SET status = $status, reason = $reason, loaded_at = $loaded_at WHERE run_id = $run_id
