-- The marker that lines are recorded as written (sql/migrations/0420_trail_record.sql), for a
-- published warehouse from before that migration.
CREATE TABLE IF NOT EXISTS trail_record (
    since_seq      BIGINT NOT NULL,
    recorded_since TIMESTAMPTZ NOT NULL
);
