-- Records gone: a complete scan of a resource no longer lists them (an incomplete scan
-- cannot say). Run after merge.sql, or alone for a list that landed no record (its stage
-- is then empty: every current row is gone). Rendered with the allow-listed table name only;
-- the run comes from load_ctx(run_id, complete), tonight's ids from `stage`. The first
-- statement finds them; recon.warehouse.load runs the others only when it found any.

CREATE OR REPLACE TEMP TABLE gone AS
SELECT t.id FROM {table} t
WHERE (SELECT complete FROM load_ctx) AND t.gone_in_run IS NULL
  AND NOT EXISTS (SELECT 1 FROM stage s WHERE s.id = t.id);

UPDATE record_versions SET raw = t.raw
FROM {table} t
WHERE record_versions.entity = '{table}' AND record_versions.id = t.id
  AND t.id IN (SELECT id FROM gone) AND record_versions.raw IS NULL;

INSERT INTO record_versions BY NAME
SELECT '{table}' AS entity, g.id,
       (SELECT max(version) FROM record_versions r WHERE r.entity = '{table}' AND r.id = g.id) + 1
           AS version,
       ctx.run_id, 'gone' AS change, NULL AS status, NULL AS amount_minor, NULL AS currency,
       NULL AS content_hash, NULL AS raw
FROM gone g CROSS JOIN load_ctx ctx;

UPDATE {table} SET gone_in_run = ctx.run_id
FROM load_ctx ctx
WHERE {table}.id IN (SELECT id FROM gone);
