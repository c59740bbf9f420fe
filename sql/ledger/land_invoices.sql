-- Replace the books invoices with the staged rows that converted; the others go to
-- ledger_rejects with their reason. Parameter: $run_id.
DELETE FROM ledger_invoices;
INSERT INTO ledger_invoices BY NAME
SELECT invoice_id_t AS invoice_id, customer_id_t AS customer_id, amount_minor_t AS amount_minor,
       code AS currency, status_t AS status, status AS books_status, _source AS source,
       _row AS row_number, $run_id AS run_id
FROM ledger_stage
WHERE reason IS NULL;
DELETE FROM ledger_rejects WHERE run_id = $run_id AND input = 'invoices';
INSERT INTO ledger_rejects BY NAME
SELECT $run_id AS run_id, 'invoices' AS input, _source AS source, _row AS row_number, reason,
       json_object('invoice_id', invoice_id, 'customer_id', customer_id, 'amount', amount,
                   'currency', currency, 'status', status) AS raw
FROM ledger_stage
WHERE reason IS NOT NULL;
