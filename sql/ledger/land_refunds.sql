-- Replace the books refunds with the staged rows that converted; the others go to
-- ledger_rejects with their reason. Parameter: $run_id.
DELETE FROM ledger_refunds;
INSERT INTO ledger_refunds
SELECT refund_id_t, payment_id_t, reference_t, amount_minor_t, code, created_at_t, _source, _row, $run_id
FROM ledger_stage
WHERE reason IS NULL;
DELETE FROM ledger_rejects WHERE run_id = $run_id AND input = 'refunds';
INSERT INTO ledger_rejects
SELECT $run_id, 'refunds', _source, _row, reason,
       json_object('refund_id', refund_id, 'payment_id', payment_id, 'reference', reference,
                   'amount', amount, 'currency', currency, 'created_at', created_at)
FROM ledger_stage
WHERE reason IS NOT NULL;
