-- A finding's books side: the books order whose reference (else order_id) is $id.
SELECT reference, order_id, amount_minor, currency, status, books_status, created_at, source,
       row_number
FROM ledger_orders
WHERE coalesce(reference, order_id) = $id OR order_id = $id
ORDER BY row_number
LIMIT 20
