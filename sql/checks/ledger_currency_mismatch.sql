-- name: ledger_currency_mismatch
-- description: A books order whose settled payments are (some of them) in another currency than the order.
-- severity: error
-- requires: [payments, ledger_orders]
-- tags: [ledger, currency]
SELECT
    'order' AS entity,
    m.entity_id,
    m.books_currency AS currency,
    m.books_amount_minor AS amount_minor,
    'currency_mismatch' AS issue_type,
    'books ' || recon_money(m.books_amount_minor, m.books_currency) || ', provider '
        || (SELECT string_agg(recon_money(p.amount_minor, p.currency), ' + ' ORDER BY p.id)
            FROM payments AS p WHERE list_contains(m.payment_ids, p.id))
        || ' (' || array_to_string(m.payment_ids, ', ') || ')' AS detail
FROM ledger_matches AS m
WHERE m.kind = 'currency_mismatch'
