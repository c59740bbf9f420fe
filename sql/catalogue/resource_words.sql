-- The data dictionary's words of a list resource's table (recon.warehouse.catalogue_tables): the
-- table's and its columns' from its catalogue entry (Resource.words, Column.words), the
-- bookkeeping columns' below. Applied with sql/dictionary.sql (recon.warehouse.dictionary).
COMMENT ON TABLE {table} IS {words};
COMMENT ON COLUMN {table}.id IS 'The provider''s id of the record (one row per id).';
{columns}
COMMENT ON COLUMN {table}.raw IS 'The record as the API sent it (JSON), undocumented fields and personal data included.';
COMMENT ON COLUMN {table}.content_hash IS 'Hash of raw written canonically (md5 of json(raw)): a change makes a new version in record_versions.';
COMMENT ON COLUMN {table}.first_seen_run IS 'The run that first listed this id.';
COMMENT ON COLUMN {table}.last_seen_run IS 'The latest run that listed this id.';
COMMENT ON COLUMN {table}.gone_in_run IS 'The complete run that no longer listed the id (NULL while the provider still lists it).';
