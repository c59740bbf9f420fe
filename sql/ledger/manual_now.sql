-- A person's match applied to the published warehouse at once (`recon match`, in the
-- transaction that records its audit-trail line): the order ($order) is linked to the
-- payments ($payments) by rule `manual` in the latest books load ($run_id), its row of
-- ledger_matches says matched, the payments' own rows (no order in the books) go, and no
-- proposal names either side any more. The next night matches it again as rule `manual`.
DELETE FROM ledger_links WHERE order_key = $order OR list_contains($payments, payment_id);
INSERT INTO ledger_links (order_key, payment_id, rule, priority, run_id)
SELECT $order, unnest($payments), 'manual', 0, $run_id;
DELETE FROM ledger_suggestions WHERE order_key = $order OR list_contains($payments, payment_id);
DELETE FROM ledger_matches WHERE entity = 'payment' AND list_contains($payments, entity_id);
UPDATE ledger_matches SET
    payment_ids = $payments,
    payments = len($payments),
    settled = len($payments),
    provider_amount_minor = $paid_minor,
    provider_currency = $currency,
    kind = CASE WHEN len($payments) > 1 THEN 'split' ELSE 'matched' END,
    state = 'matched',
    rule = 'manual',
    difference_minor = nullif($paid_minor - books_amount_minor, 0)
WHERE entity = 'order' AND entity_id = $order;
DELETE FROM ledger_manual_matches WHERE order_key = $order;
INSERT INTO ledger_manual_matches (order_key, payment_ids, who, matched_at, note, state, reason, run_id)
SELECT $order, $payments, $who, $matched_at, $note, 'applied', NULL, $run_id;
