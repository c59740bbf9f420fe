-- `<table>_major` for every resource with money in the catalogue (recon.catalogue.resources): the
-- table without `raw` (personal data stays in the table itself), plus the amount in major
-- units beside its `*_minor` column, exact (money() in sql/reference/money.sql). Rendered by
-- recon.warehouse.catalogue_views once per resource; the other tables' views are in sql/views/money.sql.
CREATE OR REPLACE VIEW {table}_major AS
SELECT * EXCLUDE (raw), money({amount_minor}, {currency}) AS {amount} FROM {table}
