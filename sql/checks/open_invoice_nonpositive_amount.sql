-- name: open_invoice_nonpositive_amount
-- description: An open invoice whose amount due is zero or negative.
-- severity: warn
-- requires: [invoices]
-- tolerates: [invoices]
-- tags: [invoices]
SELECT
    'invoice' AS entity,
    i.id AS entity_id,
    i.currency,
    i.amount_due_minor AS amount_minor,
    'nonpositive_amount_due' AS issue_type,
    'open invoice with amount due ' || recon_money(i.amount_due_minor, i.currency) AS detail
FROM invoices AS i
WHERE i.gone_in_run IS NULL
  AND i.status = 'open'
  AND i.amount_due_minor <= 0
