-- name: ledger_invoice_mismatch
-- description: An invoice the books expect that the provider does not have, or has with another amount, currency, status or customer.
-- severity: warn
-- requires: [invoices, ledger_invoices]
-- tags: [ledger, invoices]
WITH pairs AS (
    SELECT b.*, v.id AS provider_id, v.amount_due_minor AS provider_amount_minor,
           v.currency AS provider_currency, v.status AS provider_status,
           v.customer_id AS provider_customer_id
    FROM ledger_invoices AS b
    LEFT JOIN invoices AS v ON v.id = b.invoice_id AND v.gone_in_run IS NULL
),
issues AS (
    SELECT *, 'not_at_provider' AS issue_type, 'the provider has no such invoice' AS what
    FROM pairs WHERE provider_id IS NULL
    UNION ALL
    SELECT *, 'amount_mismatch', 'provider ' || recon_money(provider_amount_minor, provider_currency)
    FROM pairs
    WHERE provider_id IS NOT NULL AND provider_currency IS NOT DISTINCT FROM currency
      AND provider_amount_minor IS DISTINCT FROM amount_minor
    UNION ALL
    SELECT *, 'currency_mismatch', 'provider ' || recon_money(provider_amount_minor, provider_currency)
    FROM pairs WHERE provider_id IS NOT NULL AND provider_currency IS DISTINCT FROM currency
    UNION ALL
    SELECT *, 'status_mismatch', 'provider says ' || coalesce(provider_status, '?')
    FROM pairs WHERE provider_id IS NOT NULL AND provider_status IS DISTINCT FROM status
    UNION ALL
    SELECT *, 'customer_mismatch', 'provider customer ' || coalesce(provider_customer_id, '?')
    FROM pairs
    WHERE provider_id IS NOT NULL AND customer_id IS NOT NULL
      AND provider_customer_id IS DISTINCT FROM customer_id
)
SELECT
    'invoice' AS entity,
    i.invoice_id AS entity_id,
    i.currency,
    CASE WHEN i.issue_type = 'amount_mismatch' THEN abs(i.provider_amount_minor - i.amount_minor)
         ELSE i.amount_minor END AS amount_minor,
    i.issue_type,
    'books ' || i.status || ' ' || recon_money(i.amount_minor, i.currency)
        || coalesce(' for ' || i.customer_id, '') || '; ' || i.what AS detail
FROM issues AS i
