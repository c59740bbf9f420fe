-- name: ledger_refund_mismatch
-- description: A refund the books issued whose provider refund of the same id failed, or differs in amount, currency or payment.
-- severity: error
-- requires: [payments, refunds, ledger_refunds]
-- tags: [ledger, refunds]
WITH matched AS (
    SELECT r.*, coalesce(r.payment_id, r.books_payment_id) AS books_payment
    FROM ledger_refund_matches AS r
    JOIN refunds AS p ON p.id = r.refund_id AND p.gone_in_run IS NULL
    WHERE r.side = 'books'
),
issues AS (
    SELECT *, 'failed_at_provider' AS issue_type,
           'the provider''s refund is ' || provider_status AS what
    FROM matched WHERE list_contains($failed_statuses, lower(coalesce(provider_status, '')))
    UNION ALL
    SELECT *, 'amount_mismatch',
           'provider ' || recon_money(provider_amount_minor, provider_currency)
    FROM matched
    WHERE provider_amount_minor IS DISTINCT FROM books_amount_minor
      AND provider_currency IS NOT DISTINCT FROM books_currency
    UNION ALL
    SELECT *, 'currency_mismatch',
           'provider ' || recon_money(provider_amount_minor, provider_currency)
    FROM matched WHERE provider_currency IS DISTINCT FROM books_currency
    UNION ALL
    SELECT *, 'payment_mismatch',
           'the provider''s refund is of payment ' || coalesce(provider_payment_id, '?')
    FROM matched WHERE books_payment IS NOT NULL AND books_payment IS DISTINCT FROM provider_payment_id
)
SELECT
    'refund' AS entity,
    i.refund_key AS entity_id,
    i.books_currency AS currency,
    CASE WHEN i.issue_type = 'amount_mismatch' THEN abs(i.provider_amount_minor - i.books_amount_minor)
         ELSE i.books_amount_minor END AS amount_minor,
    i.issue_type,
    'books refund ' || i.refund_id || ' ' || recon_money(i.books_amount_minor, i.books_currency)
        || coalesce(' of payment ' || i.books_payment, '') || '; ' || i.what AS detail
FROM issues AS i
