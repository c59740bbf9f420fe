-- Replace the books orders with the staged rows (temp table ledger_stage) that converted;
-- the others go to ledger_rejects with their reason. Parameter: $run_id.
DELETE FROM ledger_orders;
INSERT INTO ledger_orders
SELECT reference_t, order_id_t, amount_minor_t, code, status_t, status, created_at_t, _source, _row, $run_id
FROM ledger_stage
WHERE reason IS NULL;
DELETE FROM ledger_rejects WHERE run_id = $run_id AND input = 'orders';
INSERT INTO ledger_rejects
SELECT $run_id, 'orders', _source, _row, reason,
       json_object('reference', reference, 'order_id', order_id, 'amount', amount,
                   'currency', currency, 'status', status, 'created_at', created_at)
FROM ledger_stage
WHERE reason IS NOT NULL;
