-- The audit trail is recorded in the warehouse as each line is written (recon.findings.acks):
-- from line `since_seq` on, every line of <db stem>.acks.jsonl is in finding_acks, so that
-- `recon findings verify` treats a line the warehouse lacks as written outside recon.
CREATE TABLE IF NOT EXISTS trail_record (
    since_seq      BIGINT NOT NULL,
    recorded_since TIMESTAMPTZ NOT NULL
);
