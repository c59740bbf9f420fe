-- The books order a manual match names: its amount and currency.
SELECT amount_minor, currency FROM ledger_orders WHERE coalesce(reference, order_id) = $order
LIMIT 1
