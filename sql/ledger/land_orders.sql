-- Replace the books orders with the staged rows (temp table ledger_stage) that converted;
-- the others go to ledger_rejects with their reason. Parameter: $run_id.
DELETE FROM ledger_orders;
INSERT INTO ledger_orders BY NAME
SELECT reference_t AS reference, order_id_t AS order_id, payment_reference_t AS payment_reference, amount_minor_t AS amount_minor,
       code AS currency, status_t AS status, status AS books_status, created_at_t AS created_at,
       _source AS source, _row AS row_number, $run_id AS run_id
FROM ledger_stage
WHERE reason IS NULL;
DELETE FROM ledger_rejects WHERE run_id = $run_id AND input = 'orders';
INSERT INTO ledger_rejects BY NAME
SELECT $run_id AS run_id, 'orders' AS input, _source AS source, _row AS row_number, reason,
       json_object('reference', reference, 'order_id', order_id,
                   'payment_reference', payment_reference, 'amount', amount,
                   'currency', currency, 'status', status, 'created_at', created_at) AS raw
FROM ledger_stage
WHERE reason IS NOT NULL;
