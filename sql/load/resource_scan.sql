-- One row per resource per run: how complete its scan was and what the load changed.
INSERT OR REPLACE INTO resource_scans
    (run_id, resource, status, reason, pages, records, duplicates, failed_pages, rejects,
     new_records, changed_records, gone_records)
VALUES ($run_id, $resource, $status, $reason, $pages, $records, $duplicates, $failed_pages,
        $rejects, $new_records, $changed_records, $gone_records)
