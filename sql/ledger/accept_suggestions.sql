-- The proposals (ledger_suggestions) `recon match accept` may take: one candidate payment for
-- the order and no other order at its best score for that payment (never a tie), optionally
-- of one currency ($currency; NULL: any). One row per order: order_key, payment_id.
SELECT s.order_key, any_value(s.payment_id) AS payment_id
FROM ledger_suggestions AS s
JOIN ledger_orders AS o ON coalesce(o.reference, o.order_id) = s.order_key
WHERE ($currency IS NULL OR o.currency = $currency)
GROUP BY s.order_key
HAVING count(*) = 1 AND max(s.candidates) = 1 AND max(s.rivals) = 1
ORDER BY s.order_key
