-- Merge one staged resource into its current-state table and the version history.
-- Rendered by recon.warehouse.working_copy with allow-listed identifiers only (the table name, its typed
-- columns, the resource's sql/load/<resource>.sql as the inner SELECT and the record_versions
-- expressions over the table's columns). The run comes from the one-row temp table
-- load_ctx(run_id, complete); `stage` (stage.sql) holds each landed id once, narrow.

-- What changed tonight: new ids, changed content, ids that came back after being gone.
CREATE OR REPLACE TEMP TABLE changes AS
SELECT s.id, s.content_hash, s.landed_row,
       CASE WHEN t.id IS NULL THEN 'new'
            WHEN t.gone_in_run IS NOT NULL THEN 'returned'
            ELSE 'changed' END AS change
FROM stage s
LEFT JOIN {table} t USING (id)
WHERE t.id IS NULL OR t.content_hash <> s.content_hash OR t.gone_in_run IS NOT NULL;

CREATE OR REPLACE TEMP TABLE version_base AS
SELECT id, max(version) AS version FROM record_versions
WHERE entity = '{table}' AND id IN (SELECT id FROM changes)
GROUP BY id;

-- The latest version's raw lives in the current table (NULL here): before a record is
-- replaced, its current raw is written to the version it had, then the new version added.
UPDATE record_versions SET raw = t.raw
FROM {table} t, version_base v
WHERE record_versions.entity = '{table}' AND record_versions.id = t.id
  AND v.id = t.id AND record_versions.version = v.version AND record_versions.raw IS NULL;

-- Replace changed rows (delete, then insert), keeping when each id was first seen.
CREATE OR REPLACE TEMP TABLE carried AS
SELECT t.id, t.first_seen_run FROM {table} t JOIN changes c USING (id);

DELETE FROM {table} WHERE id IN (SELECT id FROM carried);

-- The records themselves are read here, once: only the landed rows that changed are kept.
-- Run once per slice of the batch files ($files, the first of them $first_file in the list
-- stage.sql read), a slice as large as the memory limit allows (recon.warehouse.working_copy._slices).
INSERT INTO {table} BY NAME
SELECT {lcols}, l.raw, c.content_hash, coalesce(k.first_seen_run, ctx.run_id) AS first_seen_run,
       ctx.run_id AS last_seen_run, NULL AS gone_in_run
FROM ({select}) l
JOIN (SELECT * FROM changes
      WHERE landed_row >= landed_row($first_file, 0)
        AND landed_row < landed_row($first_file + len($files), 0)) c USING (landed_row)
LEFT JOIN carried k ON k.id = c.id
CROSS JOIN load_ctx ctx;

INSERT INTO record_versions BY NAME
SELECT '{table}' AS entity, c.id, coalesce(v.version, 0) + 1 AS version, ctx.run_id, c.change,
       {v_status} AS status, {v_amount} AS amount_minor, {v_currency} AS currency, c.content_hash,
       NULL AS raw
FROM changes c
JOIN {table} t USING (id)
LEFT JOIN version_base v USING (id)
CROSS JOIN load_ctx ctx;

-- The unchanged rows listed tonight get this run as `last_seen_run` after the transaction
-- commits (seen.sql): an update of every current row, held in memory DuckDB cannot spill
-- until commit, is done there in slices of their own.

-- What a complete scan no longer lists is gone: gone.sql, run after this file.
