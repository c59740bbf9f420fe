-- Status changes that may happen between two nights (entity = table name), from the
-- catalogue (recon.catalogue.resources: Status.to). A change of status not listed here is flagged by
-- suspicious_changes (e.g. payments refunded → confirmed). Several steps may happen between
-- two runs, so each "from" lists every later state it can reach, not only the next one.
-- Idempotent: replaced on every run of the checks.
CREATE OR REPLACE TABLE status_transitions (
    entity      VARCHAR NOT NULL,
    from_status VARCHAR NOT NULL,
    to_status   VARCHAR NOT NULL,
    PRIMARY KEY (entity, from_status, to_status)
);
INSERT INTO status_transitions BY NAME SELECT unnest($rows, recursive := true);
