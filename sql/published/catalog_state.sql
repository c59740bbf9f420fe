-- The catalog of the open database as the fingerprint of reader_objects sees it: every table,
-- view and macro of schema main with its comment (macros: their parameters) and every column
-- of a table or view with its type and comment. reader_objects itself is left out. Not the
-- definitions of views and macros: DuckDB writes them back differently once the file is
-- reopened (the statements that make them are in the fingerprint instead).
SELECT 'table' AS kind, table_name AS name, coalesce(comment, '') AS comment, '' AS body
FROM duckdb_tables()
WHERE database_name = current_database() AND schema_name = 'main'
  AND table_name <> 'reader_objects'
UNION ALL
SELECT 'view', view_name, coalesce(comment, ''), ''
FROM duckdb_views()
WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal
UNION ALL
SELECT function_type, function_name, coalesce(comment, ''),
       array_to_string(parameters, ',')
FROM duckdb_functions()
WHERE database_name = current_database() AND schema_name = 'main'
  AND function_type LIKE '%macro'
UNION ALL
SELECT 'column', table_name || '.' || lpad(column_index::VARCHAR, 4, '0') || '.' || column_name,
       coalesce(comment, ''), data_type
FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'main'
  AND table_name <> 'reader_objects'
ORDER BY ALL
