-- live_records: every record of every resource the catalogue lists with records
-- (recon.catalogue.resources), one row each, current state; gone records are kept with `gone_in_run`.
-- Per-resource checks and views read this instead of a hand-written UNION of the tables, so a
-- resource added to the catalogue is covered by all of them. Rendered by
-- recon.warehouse.catalogue_views: the part below `-- each resource` once per resource, joined by
-- UNION ALL, with allow-listed identifiers from the catalogue (a missing column is NULL).
CREATE OR REPLACE VIEW live_records AS
-- each resource
SELECT
    '{resource}' AS resource,
    '{entity}' AS entity,
    id,
    {status} AS status,
    {amount_minor} AS amount_minor,
    {currency} AS currency,
    {created_at} AS created_at,
    first_seen_run,
    last_seen_run,
    gone_in_run,
    raw
FROM {table}
