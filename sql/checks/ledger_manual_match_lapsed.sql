-- name: ledger_manual_match_lapsed
-- description: "A person's match (`recon match`) that no longer holds: the order or a payment disappeared or changed its amount since it was matched, so it is not applied; match again or undo it."
-- severity: warn
-- requires: [payments, ledger_orders]
-- tags: [ledger, matching]
SELECT
    'order' AS entity,
    m.order_key AS entity_id,
    NULL AS currency,
    NULL::BIGINT AS amount_minor,
    'lapsed' AS issue_type,
    'matched by hand to ' || array_to_string(m.payment_ids, ', ') || ' by ' || coalesce(m.who, '?')
        || ' on ' || strftime(timezone('UTC', m.matched_at), '%Y-%m-%d') || ': ' || m.reason AS detail
FROM ledger_manual_matches AS m
WHERE m.state = 'lapsed'
