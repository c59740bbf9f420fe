-- name: ledger_refund_unmatched
-- description: A refund in the books that names no live payment, names a reference shared by several settled payments, or is in another currency than its payment.
-- severity: error
-- requires: [payments, ledger_refunds]
-- tags: [ledger, refunds]
SELECT
    'refund' AS entity,
    r.refund_key AS entity_id,
    r.books_currency AS currency,
    r.books_amount_minor AS amount_minor,
    CASE WHEN r.resolution IN ('unknown_payment', 'ambiguous_reference') THEN r.resolution
         ELSE 'currency_mismatch' END AS issue_type,
    'books refund ' || recon_money(r.books_amount_minor, r.books_currency) || ' of '
        || coalesce('payment ' || r.books_payment_id, 'reference ' || r.books_reference) || ': '
        || CASE r.resolution
               WHEN 'unknown_payment' THEN 'no such live payment at the provider'
               WHEN 'ambiguous_reference' THEN 'several settled payments carry this reference'
               ELSE 'the payment ' || r.payment_id || ' is in ' || coalesce(r.payment_currency, '?') END
        AS detail
FROM ledger_refund_matches AS r
WHERE r.side = 'books'
  AND (r.resolution IN ('unknown_payment', 'ambiguous_reference')
       OR r.books_currency IS DISTINCT FROM r.payment_currency)
