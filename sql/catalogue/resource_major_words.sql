-- The words of a list resource's `<table>_major` view (sql/catalogue/money_view.sql), for a
-- resource with money (recon.warehouse.catalogue_tables); its other columns take the table's words.
COMMENT ON VIEW {table}_major IS '{table} with the amounts in major units beside the minor ones, without raw.';
COMMENT ON COLUMN {table}_major.{amount} IS '{amount_minor} in major units: money({amount_minor}, {currency}), exact DECIMAL(38,4); NULL without a minor unit.';
