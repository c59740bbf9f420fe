-- The run is loaded (merged, and every row it listed marked seen: seen.sql), and when.
UPDATE runs SET loaded_at = $loaded_at WHERE run_id = $run_id
