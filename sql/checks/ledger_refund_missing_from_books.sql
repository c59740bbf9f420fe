-- name: ledger_refund_missing_from_books
-- description: A counted provider refund of a payment the books hold an order for, whose refund id the books never recorded (older than the grace).
-- severity: error
-- requires: [payments, refunds, ledger_orders, ledger_refunds]
-- tags: [ledger, refunds]
-- evaluable_when: SELECT count(refund_id) > 0 FROM ledger_refunds
-- not_evaluated_reason: the books' refunds carry no refund ids to compare by
SELECT
    'refund' AS entity,
    r.refund_key AS entity_id,
    r.provider_currency AS currency,
    r.provider_amount_minor AS amount_minor,
    'not_in_books' AS issue_type,
    'provider refund ' || recon_money(r.provider_amount_minor, r.provider_currency) || ' ('
        || coalesce(r.provider_status, '?') || ') of payment ' || r.provider_payment_id
        || ': not in the books' AS detail
FROM ledger_refund_matches AS r
WHERE r.side = 'provider' AND NOT r.young
