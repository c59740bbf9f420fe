-- Where each resource's amount and currency are in the raw record, from the catalogue
-- (recon.catalogue.resources: Records.amount_json / currency_json), to word a value the loader could not
-- type (impossible_amounts). `field` names a mapped field (Settings.fields): tonight's path
-- for it is in field_presence, its default in `default_path`; `suffix` reaches into it (a
-- Money object's `amountMinor`). Idempotent: replaced whenever the catalogue's objects are.
CREATE OR REPLACE TABLE money_paths (
    resource     VARCHAR NOT NULL,
    column_name  VARCHAR NOT NULL,   -- amount_minor | currency
    field        VARCHAR,            -- the mapped field, or NULL: a fixed path
    default_path VARCHAR NOT NULL,
    suffix       VARCHAR NOT NULL,
    PRIMARY KEY (resource, column_name)
);
INSERT INTO money_paths BY NAME SELECT unnest($rows, recursive := true);
