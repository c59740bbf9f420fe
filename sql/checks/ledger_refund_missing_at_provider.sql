-- name: ledger_refund_missing_at_provider
-- description: A refund the books issued, by its refund id, that the provider does not list (older than the grace).
-- severity: error
-- requires: [payments, refunds, ledger_refunds]
-- tags: [ledger, refunds]
SELECT
    'refund' AS entity,
    r.refund_key AS entity_id,
    r.books_currency AS currency,
    r.books_amount_minor AS amount_minor,
    'not_at_provider' AS issue_type,
    'books refund ' || recon_money(r.books_amount_minor, r.books_currency) || ' of '
        || coalesce('payment ' || r.books_payment_id, 'reference ' || r.books_reference)
        || ' since ' || strftime(timezone('UTC', r.item_at), '%Y-%m-%d %H:%M UTC')
        || ': the provider lists no refund ' || r.refund_id AS detail
FROM ledger_refund_matches AS r
WHERE r.side = 'books'
  AND r.refund_id IS NOT NULL
  AND r.provider_counted IS NULL  -- no live provider refund of that id
  AND NOT r.young
