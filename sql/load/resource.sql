-- Stage a list resource's landed records: one JSON parse per record, the columns its
-- catalogue entry declares (recon.catalogue.resources.Column) typed. Made by recon.warehouse.catalogue_tables
-- for each resource; only identifiers and the declared reads are formatted in.
-- A value of the wrong JSON type loads as NULL (raw keeps it; check impossible_amounts flags
-- it). Codes are normalised (currency upper case, status lower case); raw keeps the value as
-- sent. A field the spec does not show is read through its bound path `$path_<field>`
-- (recon.warehouse.fields), never formatted in.
SELECT
    id,
    raw::JSON AS raw,
    landed_row,
{columns}
FROM (
    SELECT id, raw, {scope}landed_row($first_file + file_index, file_row_number) AS landed_row{documented}
    FROM read_parquet($files)
)
