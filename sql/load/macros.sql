-- Macros the stage files share (recon.warehouse.working_copy defines them once per load, as TEMP macros:
-- nothing of them is stored in the warehouse file).
--
-- Integer money: a JSON value is an amount in minor units only when it is a JSON integer
-- that fits a BIGINT. A string ("1250"), a decimal (12.5), a boolean or an integer beyond
-- 64 bits loads as NULL; raw keeps the value as sent and check impossible_amounts flags it.
--   json_minor_units('1250'::JSON) = 1250    json_minor_units('"1250"'::JSON) = NULL
CREATE OR REPLACE TEMP MACRO json_minor_units(v) AS
    CASE WHEN json_type(v) IN ('BIGINT', 'UBIGINT') THEN TRY_CAST(v::VARCHAR AS BIGINT) END;

-- Where a record was landed: the batch file (its place in the list of files read) and the
-- row in it, as one BIGINT key (read_parquet's virtual columns file_index, file_row_number).
CREATE OR REPLACE TEMP MACRO landed_row(file_index, file_row_number) AS
    (file_index::BIGINT << 32) + file_row_number
