-- name: ledger_duplicate_charge
-- description: A books order charged more than once, its settled payments exceed the order amount by at least one whole payment.
-- severity: error
-- requires: [payments, ledger_orders]
-- tags: [ledger]
SELECT
    'order' AS entity,
    m.entity_id,
    m.books_currency AS currency,
    m.provider_amount_minor - m.books_amount_minor AS amount_minor,
    'duplicate_charge' AS issue_type,
    'books ' || recon_money(m.books_amount_minor, m.books_currency)
        || ', provider ' || recon_money(m.provider_amount_minor, m.provider_currency)
        || ' in ' || m.settled || ' settled payments (' || array_to_string(m.payment_ids, ', ')
        || '): charged ' || recon_money(m.provider_amount_minor - m.books_amount_minor, m.books_currency)
        || ' too much' AS detail
FROM ledger_matches AS m
WHERE m.kind = 'duplicate_charge'
