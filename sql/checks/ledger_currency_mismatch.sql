-- name: ledger_currency_mismatch
-- description: A books order whose settled payments are (some of them) in another currency than the order.
-- severity: error
-- requires: [payments, ledger_orders]
-- tags: [ledger, currency]
WITH breaks AS (
    SELECT * FROM ledger_matches WHERE kind = 'currency_mismatch'
),
paid AS (
    SELECT b.entity_id, string_agg(recon_money(p.amount_minor, p.currency), ' + ' ORDER BY p.id) AS amounts
    FROM (SELECT entity_id, unnest(payment_ids) AS payment_id FROM breaks) AS b
    JOIN payments AS p ON p.id = b.payment_id
    GROUP BY b.entity_id
)
SELECT
    'order' AS entity,
    m.entity_id,
    m.books_currency AS currency,
    m.books_amount_minor AS amount_minor,
    'currency_mismatch' AS issue_type,
    'books ' || recon_money(m.books_amount_minor, m.books_currency) || ', provider ' || p.amounts
        || ' (' || array_to_string(m.payment_ids, ', ') || ')' AS detail
FROM breaks AS m
JOIN paid AS p ON p.entity_id = m.entity_id
