-- A run's row, replaced if an earlier attempt of the same run got this far and rolled back.
DELETE FROM runs WHERE run_id = $run_id;
INSERT INTO runs (run_id, started_at, status, reason, base_url, trigger)
VALUES ($run_id, $started_at, 'running', NULL, $base_url, $trigger)
