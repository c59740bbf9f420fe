-- The migrations a warehouse has taken: one row per sql/migrations/NNNN_<name>.sql file,
-- applied once, in number order, each in its own transaction (recon.warehouse.migrations).
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     INTEGER PRIMARY KEY,         -- NNNN of the file name
    name        VARCHAR NOT NULL,            -- the file name
    applied_at  TIMESTAMPTZ NOT NULL
);
