-- name: ledger_matched_within_tolerance
-- description: "A books order matched although its amount differs from the provider's: within the tolerance (RECON_LEDGER_TOLERANCE_MINOR / _BPS), by a cart whose orders add up within it, or by a person's match; the difference is kept, never matched silently."
-- severity: info
-- requires: [payments, ledger_orders]
-- tags: [ledger, matching]
SELECT
    'order' AS entity,
    m.entity_id,
    m.books_currency AS currency,
    abs(m.difference_minor) AS amount_minor,
    m.rule AS issue_type,
    'books ' || recon_money(m.books_amount_minor, m.books_currency)
        || ', provider ' || recon_money(m.books_amount_minor - m.difference_minor, m.books_currency)
        || ' (' || array_to_string(m.payment_ids, ', ') || '): difference '
        || recon_money(m.difference_minor, m.books_currency) || ' matched by rule ' || m.rule AS detail
FROM ledger_matches AS m
WHERE m.entity = 'order' AND m.state = 'matched' AND coalesce(m.difference_minor, 0) <> 0
