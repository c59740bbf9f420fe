-- Records that could not be keyed, kept whole with the reason and their page's request id.
INSERT INTO rejects BY NAME
SELECT $run_id AS run_id, $resource AS resource, page_offset, request_id, reason, raw
FROM read_parquet($files)
