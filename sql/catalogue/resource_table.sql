-- A list resource's table as its catalogue entry declares it (recon.warehouse.catalogue_tables): made
-- after the numbered migrations when none of them made it, so a resource added to the
-- catalogue needs no migration of its own (a change to a released table still does).
-- The bookkeeping columns are every resource table's: sql/load/merge.sql fills them.
CREATE TABLE IF NOT EXISTS {table} (
    id             VARCHAR NOT NULL,
{columns}
    raw            JSON NOT NULL,
    content_hash   VARCHAR NOT NULL,
    first_seen_run VARCHAR NOT NULL,
    last_seen_run  VARCHAR NOT NULL,
    gone_in_run    VARCHAR
)
