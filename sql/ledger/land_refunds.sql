-- Replace the books refunds with the staged rows that converted; the others go to
-- ledger_rejects with their reason. Parameter: $run_id.
DELETE FROM ledger_refunds;
INSERT INTO ledger_refunds BY NAME
SELECT refund_id_t AS refund_id, payment_id_t AS payment_id, reference_t AS reference,
       amount_minor_t AS amount_minor, code AS currency, created_at_t AS created_at,
       _source AS source, _row AS row_number, $run_id AS run_id
FROM ledger_stage
WHERE reason IS NULL;
DELETE FROM ledger_rejects WHERE run_id = $run_id AND input = 'refunds';
INSERT INTO ledger_rejects BY NAME
SELECT $run_id AS run_id, 'refunds' AS input, _source AS source, _row AS row_number, reason,
       json_object('refund_id', refund_id, 'payment_id', payment_id, 'reference', reference,
                   'amount', amount, 'currency', currency, 'created_at', created_at) AS raw
FROM ledger_stage
WHERE reason IS NOT NULL;
