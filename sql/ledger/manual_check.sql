-- What `recon match` checks before it matches an order by hand: the order's amount and
-- currency, each named live payment's amount and currency, the proposals (ledger_suggestions)
-- naming one of those payments for another order, and the open ledger findings of the
-- latest run on either side (resolved by the match at once). Parameters: $order, $payments.
SELECT 'order' AS side, coalesce(reference, order_id) AS id, amount_minor, currency,
       NULL AS other_order
FROM ledger_orders WHERE coalesce(reference, order_id) = $order
UNION ALL
SELECT 'payment', id, amount_minor, currency, NULL
FROM payments WHERE gone_in_run IS NULL AND list_contains($payments, id)
UNION ALL
SELECT 'proposed', payment_id, NULL, NULL, order_key
FROM ledger_suggestions WHERE list_contains($payments, payment_id) AND order_key <> $order
