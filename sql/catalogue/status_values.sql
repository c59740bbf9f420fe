-- Known status values per entity (table name) and whether each is final, from the catalogue
-- (recon.catalogue.resources: Records.statuses). is_final: true/false where "stuck in a non-final
-- state" applies (payments, refunds, payment_intents); NULL where it does not. Anything not
-- listed is flagged by unknown_status. Idempotent: replaced on every run of the checks.
CREATE OR REPLACE TABLE status_values (
    entity   VARCHAR NOT NULL,
    status   VARCHAR NOT NULL,
    is_final BOOLEAN,
    PRIMARY KEY (entity, status)
);
INSERT INTO status_values BY NAME SELECT unnest($rows, recursive := true);
