-- name: bank_unexpected_credit
-- description: A credit on a bank statement that RECON_BANK_PROVIDER_MATCH says is the provider's, matching no expected settlement (currency, value date within the window, amount within the tolerance), nor a candidate of one.
-- severity: warn
-- requires: [payments, refunds, bank_statements]
-- tags: [bank]
SELECT
    'bank_line' AS entity,
    l.file_name || ':' || l.line_no AS entity_id,
    l.currency,
    l.amount_minor,
    'unexpected' AS issue_type,
    'credit ' || recon_money(l.amount_minor, l.currency) || ' value '
        || strftime(l.value_date, '%Y-%m-%d') || ' from ' || coalesce(l.counterparty, '(no name)')
        || coalesce(': ' || l.remittance, '') || '; no expected settlement in '
        || l.currency || ' matches it' AS detail
FROM bank_lines AS l
WHERE l.match_state = 'unexpected'
