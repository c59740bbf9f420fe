-- Every open break of the books against the provider for run $run_id (the ledger checks'
-- unresolved findings but the pending ones), with the two ages, named as in
-- findings_current: item_age_days (the item's own business date -- the order's, payment's,
-- refund's or invoice's -- to the run's start; NULL when the item has no date: unknown,
-- never 0) and known_days (how long recon has known the break: from the start of the run
-- that first saw it), its aging bucket (by the item's age), and whether it is acknowledged.
WITH run AS (
    SELECT started_at FROM runs WHERE run_id = $run_id
),
items AS (
    SELECT entity, entity_id, item_at FROM ledger_matches
    UNION ALL
    SELECT 'refund', refund_key, item_at FROM ledger_refund_matches
    UNION ALL
    SELECT 'payment', payment_id, NULL FROM ledger_payment_refunds
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
    FROM findings AS f
    LEFT JOIN dated AS d ON d.entity = f.entity AND d.entity_id = f.entity_id
    LEFT JOIN payments AS p ON f.entity = 'payment' AND p.id = f.entity_id
    LEFT JOIN invoices AS i ON f.entity = 'invoice' AND i.id = f.entity_id
    LEFT JOIN runs AS r ON r.run_id = f.first_seen_run
    LEFT JOIN finding_acknowledgements AS a ON a.run_id = f.run_id AND a.finding_key = f.finding_key
    WHERE f.run_id = $run_id
      AND starts_with(f.check_name, 'ledger_') AND f.check_name <> 'ledger_pending'
      AND f.state IN ('new', 'open', 'reopened')
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
ORDER BY b.currency, b.amount_minor DESC NULLS LAST, b.finding_key
