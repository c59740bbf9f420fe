-- name: bank_settlement_amount_mismatch
-- description: A settlement found on a bank statement for another amount than expected; amount_minor is received minus expected, the detail gives the expected gross, refunds, fees and net and what was received.
-- severity: error
-- requires: [payments, refunds, bank_statements]
-- tags: [bank]
-- finding_key: [entity_id]
SELECT
    'settlement' AS entity,
    s.settlement_id AS entity_id,
    s.currency,
    s.difference_minor AS amount_minor,
    CASE WHEN s.difference_minor < 0 THEN 'short' ELSE 'over' END AS issue_type,
    'expected gross ' || recon_money(s.gross_minor, s.currency)
        || ' - refunds ' || recon_money(s.refunds_minor, s.currency)
        || ' - fees ' || coalesce(recon_money(s.fees_minor, s.currency), 'unknown')
        || ' = net ' || recon_money(s.net_minor, s.currency)
        || '; received ' || recon_money(s.received_minor, s.currency) || ' (' || s.credit
        || ' on ' || strftime(s.value_date, '%Y-%m-%d') || '); difference '
        || recon_money(s.difference_minor, s.currency) AS detail
FROM bank_settlements AS s
WHERE s.state = 'mismatch'
