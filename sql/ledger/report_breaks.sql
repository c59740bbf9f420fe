-- Every open break of the books against the provider for run $run_id (the ledger checks'
-- unresolved findings but the pending ones), with the two ages, named as in
-- findings_current: item_age_days (the item's own business date -- the order's, payment's,
-- refund's or invoice's -- to the run's start; NULL when the item has no date: unknown,
-- never 0) and known_days (how long recon has known the break: from the start of the run
-- that first saw it), its aging bucket (by the item's age), and whether it is acknowledged.
-- A batch of them at a time (recon.report.ledger): the findings at the rowids registered as
-- report_batch(rid), in no order; a million breaks joined at once with their items, payments
-- and invoices did not fit a report's 64 MiB (issue 38).
WITH run AS (
    SELECT started_at FROM runs WHERE run_id = $run_id
),
batch AS (
    SELECT f.* FROM findings AS f SEMI JOIN report_batch AS b ON b.rid = f.rowid
),
wanted AS (SELECT DISTINCT entity, entity_id FROM batch),
items AS (
    SELECT entity, entity_id, item_at FROM ledger_matches
    SEMI JOIN wanted AS w USING (entity, entity_id)
    UNION ALL
    SELECT 'refund', refund_key, item_at FROM ledger_refund_matches
    WHERE refund_key IN (SELECT entity_id FROM wanted WHERE entity = 'refund')
    UNION ALL
    SELECT 'payment', payment_id, NULL FROM ledger_payment_refunds
    WHERE payment_id IN (SELECT entity_id FROM wanted WHERE entity = 'payment')
),
-- the batch's payments and invoices only (a join with every one built a million-row table)
paid AS (
    SELECT id, created_at FROM payments
    WHERE id IN (SELECT entity_id FROM wanted WHERE entity = 'payment')
),
invoiced AS (
    SELECT id, created_at FROM invoices
    WHERE id IN (SELECT entity_id FROM wanted WHERE entity = 'invoice')
),
dated AS (
    SELECT entity, entity_id, max(item_at) AS item_at FROM items GROUP BY entity, entity_id
),
breaks AS (
    SELECT
        f.check_name, f.severity, f.finding_key, f.state, f.entity, f.entity_id, f.currency,
        f.amount_minor, f.issue_type, f.detail, f.first_seen_run,
        coalesce(d.item_at, p.created_at, i.created_at) AS item_at,
        r.started_at AS first_seen_at,
        coalesce(a.acknowledged, false) AS acknowledged,
        CASE WHEN a.acknowledged THEN a.who END AS acknowledged_by,
        CASE WHEN a.acknowledged THEN a.note END AS acknowledged_note
    FROM batch AS f
    LEFT JOIN dated AS d ON d.entity = f.entity AND d.entity_id = f.entity_id
    LEFT JOIN paid AS p ON f.entity = 'payment' AND p.id = f.entity_id
    LEFT JOIN invoiced AS i ON f.entity = 'invoice' AND i.id = f.entity_id
    LEFT JOIN runs AS r ON r.run_id = f.first_seen_run
    LEFT JOIN finding_acknowledgements AS a ON a.run_id = f.run_id AND a.finding_key = f.finding_key
)
SELECT
    b.*,
    date_diff('day', b.item_at, (SELECT started_at FROM run)) AS item_age_days,
    date_diff('day', b.first_seen_at, (SELECT started_at FROM run)) AS known_days,
    CASE WHEN date_diff('day', b.item_at, (SELECT started_at FROM run)) <= 7 THEN '0-7'
         WHEN date_diff('day', b.item_at, (SELECT started_at FROM run)) <= 30 THEN '8-30'
         WHEN date_diff('day', b.item_at, (SELECT started_at FROM run)) <= 90 THEN '31-90'
         WHEN b.item_at IS NULL THEN 'unknown'
         ELSE '90+' END AS age_bucket
FROM breaks AS b
