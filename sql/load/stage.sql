-- Stage one resource's landed batches, narrow: each id once, its content hash and where its
-- landed row is (landed_row, macros.sql), not the record itself. The raw text and the typed
-- columns are read from the landed Parquet once more, by the insert of what changed only
-- (merge.sql), so that a million records are never held in memory twice.
-- A run lands each id once; across a resumed run's batches the first landing wins.
CREATE OR REPLACE TEMP TABLE stage AS
SELECT id, md5(raw) AS content_hash, landed_row(file_index, file_row_number) AS landed_row
FROM read_parquet($files)
QUALIFY row_number() OVER (PARTITION BY id ORDER BY page_offset, landed_row) = 1
