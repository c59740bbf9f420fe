-- How many of one resource's landed records carry each mapped field (recon.warehouse.fields), so that
-- a check needing a field that no record of the run has says "not evaluated" instead of
-- finding (or passing) on nothing. Present = the path exists and is not JSON null.
-- $fields / $paths: the mapped fields and their JSON paths, in the same order.
INSERT OR REPLACE INTO field_presence (run_id, resource, field, json_path, records, present)
SELECT
    $run_id, $resource, f.field, f.json_path,
    count(l.v),
    count(*) FILTER (WHERE l.v[f.i] IS NOT NULL AND json_type(l.v[f.i]) <> 'NULL')
FROM (SELECT json_extract(raw, $paths) AS v FROM read_parquet($files)) AS l
RIGHT JOIN (
    SELECT unnest($fields) AS field, unnest($paths) AS json_path,
           unnest(range(1, len($paths) + 1)) AS i
) AS f ON true
GROUP BY f.field, f.json_path
