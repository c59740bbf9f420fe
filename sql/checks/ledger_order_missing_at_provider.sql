-- name: ledger_order_missing_at_provider
-- description: A books order that says it was paid, older than the grace, with no settled payment carrying its reference at the provider.
-- severity: error
-- requires: [payments, ledger_orders]
-- tags: [ledger]
SELECT
    'order' AS entity,
    m.entity_id,
    m.books_currency AS currency,
    m.books_amount_minor AS amount_minor,
    CASE WHEN m.payments = 0 THEN 'no_payment' ELSE 'not_settled' END AS issue_type,
    'books ' || m.books_status || ' ' || recon_money(m.books_amount_minor, m.books_currency)
        || ' since ' || strftime(timezone('UTC', m.item_at), '%Y-%m-%d %H:%M UTC') || '; provider: '
        || CASE WHEN m.payments = 0 THEN 'no payment with this reference'
                ELSE 'payment(s) ' || m.provider_statuses || ', none settled' END
        || coalesce('; best candidate: ' || m.best_candidate, '') AS detail
FROM ledger_matches AS m
WHERE m.kind = 'order_missing_at_provider'
