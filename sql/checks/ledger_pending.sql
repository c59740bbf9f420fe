-- name: ledger_pending
-- description: Books and provider items younger than the grace (RECON_LEDGER_GRACE_HOURS) with no counterpart yet, shown, not a break; they become breaks when the grace ends.
-- severity: info
-- requires: [payments, ledger_orders]
-- tags: [ledger, timing]
WITH loaded AS (
    SELECT resource FROM resource_scans WHERE run_id = $run_id AND status = 'complete'
)
SELECT
    m.entity,
    m.entity_id,
    coalesce(m.books_currency, m.provider_currency) AS currency,
    coalesce(m.books_amount_minor, m.provider_amount_minor) AS amount_minor,
    m.kind AS issue_type,
    CASE WHEN m.entity = 'order'
         THEN 'books order ' || recon_money(m.books_amount_minor, m.books_currency)
              || ' placed ' || strftime(timezone('UTC', m.item_at), '%Y-%m-%d %H:%M UTC')
              || ': no settled payment yet'
         ELSE 'provider ' || m.provider_status || ' ' || recon_money(m.provider_amount_minor, m.provider_currency)
              || ' at ' || strftime(timezone('UTC', m.item_at), '%Y-%m-%d %H:%M UTC') || ': not in the books yet'
    END AS detail
FROM ledger_matches AS m
WHERE m.state = 'pending'
UNION ALL
SELECT
    'payment', r.payment_id, r.currency, r.books_total_minor - r.books_settled_minor, 'refund_in_flight',
    'books refunded ' || recon_money(r.books_total_minor, r.currency) || ', of which '
        || recon_money(r.books_total_minor - r.books_settled_minor, r.currency)
        || ' within the grace; provider still says ' || r.status
FROM ledger_payment_refunds AS r
WHERE r.state = 'pending' AND 'ledger_refunds' IN (SELECT resource FROM loaded)
UNION ALL
SELECT
    'refund', r.refund_key,
    CASE WHEN r.side = 'books' THEN r.books_currency ELSE r.provider_currency END,
    CASE WHEN r.side = 'books' THEN r.books_amount_minor ELSE r.provider_amount_minor END,
    CASE WHEN r.side = 'books' THEN 'awaiting_provider' ELSE 'awaiting_books' END,
    CASE WHEN r.side = 'books'
         THEN 'books refund ' || recon_money(r.books_amount_minor, r.books_currency) || ' issued '
              || strftime(timezone('UTC', r.item_at), '%Y-%m-%d %H:%M UTC') || ': not at the provider yet'
         ELSE 'provider refund ' || recon_money(r.provider_amount_minor, r.provider_currency) || ' of payment '
              || r.provider_payment_id || ': not in the books yet' END
FROM ledger_refund_matches AS r
WHERE r.young
  AND 'refunds' IN (SELECT resource FROM loaded)
  AND 'ledger_refunds' IN (SELECT resource FROM loaded)
  AND ((r.side = 'books' AND r.refund_id IS NOT NULL AND r.provider_counted IS NULL)
       OR (r.side = 'provider' AND (SELECT count(refund_id) > 0 FROM ledger_refunds)))
