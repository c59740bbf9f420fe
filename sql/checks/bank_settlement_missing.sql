-- name: bank_settlement_missing
-- description: "An expected settlement (the settled payments of one business day and currency, less refunds and fees) found on no bank statement by its pay date plus the [bank] grace_days, judged against the last statement, not the clock (one due later is in transit); or, issue_type ambiguous, several credits could be it and none is picked: every candidate is listed. A settlement whose window overlaps a statement gap is not judged."
-- severity: error
-- requires: [payments, refunds, bank_statements]
-- tags: [bank]
-- finding_key: [entity_id]
SELECT
    'settlement' AS entity,
    s.settlement_id AS entity_id,
    s.currency,
    s.net_minor AS amount_minor,
    s.state AS issue_type,
    'expected ' || recon_money(s.net_minor, s.currency) || ' (gross '
        || recon_money(s.gross_minor, s.currency) || ' over ' || s.payments || ' payments, refunds '
        || recon_money(s.refunds_minor, s.currency) || ', fees '
        || coalesce(recon_money(s.fees_minor, s.currency), 'unknown') || ') due '
        || strftime(s.pay_date, '%Y-%m-%d') || ', late after ' || strftime(s.deadline, '%Y-%m-%d')
        || CASE WHEN s.state = 'ambiguous'
                THEN '; ambiguous, none picked: ' || s.candidates
                ELSE '; on no statement' END AS detail
FROM bank_settlements AS s
WHERE s.state IN ('missing', 'ambiguous')
