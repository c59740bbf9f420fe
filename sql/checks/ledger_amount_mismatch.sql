-- name: ledger_amount_mismatch
-- description: A books order whose settled payments (same reference and currency) do not add up to the order amount, and not by a whole duplicate payment.
-- severity: error
-- requires: [payments, ledger_orders]
-- tags: [ledger]
SELECT
    'order' AS entity,
    m.entity_id,
    m.books_currency AS currency,
    abs(m.provider_amount_minor - m.books_amount_minor) AS amount_minor,
    CASE WHEN m.provider_amount_minor IS NULL THEN 'provider_amount_unknown'
         WHEN m.provider_amount_minor < m.books_amount_minor THEN 'provider_short'
         ELSE 'provider_over' END AS issue_type,
    'books ' || recon_money(m.books_amount_minor, m.books_currency)
        || ', provider ' || recon_money(m.provider_amount_minor, m.provider_currency)
        || ' over ' || m.settled || CASE WHEN m.settled = 1 THEN ' settled payment (' ELSE ' settled payments (' END
        || array_to_string(m.payment_ids, ', ') || ')' AS detail
FROM ledger_matches AS m
WHERE m.kind = 'amount_mismatch'
