-- Replace the books invoices with the staged rows that converted; the others go to
-- ledger_rejects with their reason. Parameter: $run_id.
DELETE FROM ledger_invoices;
INSERT INTO ledger_invoices
SELECT invoice_id_t, customer_id_t, amount_minor_t, code, status_t, status, _source, _row, $run_id
FROM ledger_stage
WHERE reason IS NULL;
DELETE FROM ledger_rejects WHERE run_id = $run_id AND input = 'invoices';
INSERT INTO ledger_rejects
SELECT $run_id, 'invoices', _source, _row, reason,
       json_object('invoice_id', invoice_id, 'customer_id', customer_id, 'amount', amount,
                   'currency', currency, 'status', status)
FROM ledger_stage
WHERE reason IS NOT NULL;
