-- The queue snapshot's findings, stored in the queue's order: DuckDB's top-N then skips the
-- row groups that cannot hold the page (their zone maps), so the first page of a million
-- findings reads a few row groups instead of all.
CREATE TABLE findings AS SELECT * FROM staged ORDER BY check_name, finding_key
