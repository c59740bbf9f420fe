-- Stage one resource's landed batches. Rendered by recon.warehouse with the resource's
-- sql/load/<resource>.sql as the inner SELECT and the columns kept in record_versions.
-- A run lands each id once; across a resumed run's batches the first landing wins.
CREATE OR REPLACE TEMP TABLE stage AS
SELECT *, {v_status} AS v_status, {v_amount} AS v_amount_minor, {v_currency} AS v_currency
FROM ({select})
QUALIFY row_number() OVER (PARTITION BY id ORDER BY page_offset) = 1
