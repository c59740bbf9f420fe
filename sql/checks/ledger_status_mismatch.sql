-- name: ledger_status_mismatch
-- description: A books order whose status differs from its settled payments' (books refunded but provider confirmed, a refund the books never recorded, books unpaid but provider settled).
-- severity: error
-- requires: [payments, ledger_orders]
-- tags: [ledger, refunds]
SELECT
    'order' AS entity,
    m.entity_id,
    m.books_currency AS currency,
    m.books_amount_minor AS amount_minor,
    'books_' || m.books_status || '_provider_' || m.provider_status AS issue_type,
    'books say ' || m.books_status || ' (' || recon_money(m.books_amount_minor, m.books_currency)
        || '), provider says ' || m.provider_status || ' (' || array_to_string(m.payment_ids, ', ') || ')'
        AS detail
FROM ledger_matches AS m
WHERE m.entity = 'order'
  AND m.settled > 0
  AND m.books_status IS DISTINCT FROM m.provider_status
