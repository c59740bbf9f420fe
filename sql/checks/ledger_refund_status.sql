-- name: ledger_refund_status
-- description: A settled payment whose status disagrees with the books' refunds of it (refunded iff they add up to its amount, partially_refunded iff strictly between); needs no refunds list.
-- severity: error
-- requires: [payments, ledger_refunds]
-- tags: [ledger, refunds]
SELECT
    'payment' AS entity,
    r.payment_id AS entity_id,
    r.currency,
    CASE WHEN r.status = 'refunded' THEN abs(r.amount_minor - r.books_total_minor)
         ELSE r.books_total_minor END AS amount_minor,
    CASE WHEN r.expected = 'over_refunded' THEN 'books_over_refunded'
         ELSE 'books_' || r.expected || '_provider_' || r.status END AS issue_type,
    'provider ' || r.status || ' ' || recon_money(r.amount_minor, r.currency) || '; books refunded '
        || recon_money(r.books_total_minor, r.currency) || ' in ' || r.books_refunds
        || CASE WHEN r.books_refunds = 1 THEN ' refund' ELSE ' refunds' END
        || coalesce(' (order ' || r.reference || ')', '') AS detail
FROM ledger_payment_refunds AS r
WHERE r.state = 'break'
