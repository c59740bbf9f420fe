-- sql/findings/list.sql's columns for a batch of rowids in order (registered as
-- listing_batch(pos, rid) by recon.findings.listing, from sql/findings/list_keys.sql).
SELECT f.run_id, f.finding_key, f.check_name, f.severity, f.state, f.entity,
       f.entity_id, f.currency, f.amount_minor, f.issue_type, f.detail,
       f.first_seen_run, r.started_at, f.item_at
FROM listing_batch AS b
JOIN findings AS f ON f.rowid = b.rid
LEFT JOIN runs AS r ON r.run_id = f.first_seen_run
ORDER BY b.pos
