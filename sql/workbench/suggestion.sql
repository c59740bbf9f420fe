-- The proposal of a ledger_suggested_match finding: the candidates for its order.
SELECT payment_id, rivals FROM ledger_suggestions WHERE order_key = $order ORDER BY payment_id
