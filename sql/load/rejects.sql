-- Records that could not be keyed, kept whole with the reason and their page's request id.
INSERT INTO rejects
SELECT $run_id, $resource, page_offset, request_id, reason, raw FROM read_parquet($files)
