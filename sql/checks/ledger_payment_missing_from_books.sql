-- name: ledger_payment_missing_from_books
-- description: A settled payment at the provider, older than the grace, whose reference is no order in the books (money received that the books cannot explain).
-- severity: error
-- requires: [payments, ledger_orders]
-- tags: [ledger]
SELECT
    'payment' AS entity,
    m.entity_id,
    m.provider_currency AS currency,
    m.provider_amount_minor AS amount_minor,
    CASE WHEN m.reference IS NULL OR m.reference = '' THEN 'no_reference' ELSE 'not_in_books' END AS issue_type,
    'provider ' || m.provider_status || ' ' || recon_money(m.provider_amount_minor, m.provider_currency)
        || CASE WHEN m.reference IS NULL OR m.reference = '' THEN ' with no reference'
                ELSE ', reference ' || m.reference || ' is not in the books' END
        || coalesce('; best candidate: ' || CASE WHEN starts_with(m.best_candidate, 'ambiguous') THEN m.best_candidate ELSE 'order ' || m.best_candidate END, '') AS detail
FROM ledger_matches AS m
WHERE m.kind = 'payment_missing_from_books'
