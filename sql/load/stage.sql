-- Stage one resource's landed batches, narrow: each id once, its content hash and where its
-- landed row is (landed_row, macros.sql), not the record itself. The hash is of the record's
-- text made canonical (`json`: no white space, escapes and numbers written one way), so a
-- record lands as one version whether its text is the provider's (a list page, as sent) or
-- written back from its parsed value (recon.paging.records). The raw text and the typed
-- columns are read from the landed Parquet once more, by the insert of what changed only
-- (merge.sql), so that a million records are never held in memory twice.
CREATE OR REPLACE TEMP TABLE stage AS
SELECT id, md5(json(raw)) AS content_hash, landed_row(file_index, file_row_number) AS landed_row,
       page_offset
FROM read_parquet($files);

-- A run lands each id once; across a resumed run's batches (or past the scan's memory of
-- ids) the first landing wins. Only the ids landed more than once are ordered: a window over
-- every id cost more than the whole stage otherwise does.
DELETE FROM stage WHERE landed_row IN (
    SELECT landed_row FROM stage
    WHERE id IN (SELECT id FROM stage GROUP BY id HAVING count(*) > 1)
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY page_offset, landed_row) > 1
)
