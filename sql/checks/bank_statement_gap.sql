-- name: bank_statement_gap
-- description: Bank statements whose balances do not chain — an opening balance that is not the previous closing, a business day with no statement, or lines that do not add up to the closing balance. Settlements due in the span are not judged (neither missing nor passed).
-- severity: error
-- requires: [bank_statements]
-- tags: [bank]
-- finding_key: [entity_id]
SELECT
    'statement' AS entity,
    g.currency || ':' || strftime(g.first_missing, '%Y-%m-%d') AS entity_id,
    g.currency,
    CAST(sum(g.difference_minor) AS BIGINT) AS amount_minor,
    string_agg(DISTINCT g.kind, ',' ORDER BY g.kind) AS issue_type,
    string_agg(
        CASE g.kind
            WHEN 'lines_do_not_add_up'
                THEN g.file_name || ' of ' || strftime(g.statement_date, '%Y-%m-%d') || ': opening '
                     || recon_money(g.opening_minor, g.currency) || ' plus its lines is not its closing balance (off by '
                     || recon_money(g.difference_minor, g.currency) || ')'
            ELSE g.file_name || ' of ' || strftime(g.statement_date, '%Y-%m-%d')
                 || coalesce(' opens at ' || recon_money(g.opening_minor, g.currency), '')
                 || coalesce(', ' || g.previous_file || ' of ' || strftime(g.previous_date, '%Y-%m-%d')
                             || ' closed at ' || recon_money(g.previous_closing_minor, g.currency), '')
                 || CASE WHEN len(g.missing_days) > 0
                         THEN '; business days with no statement: '
                              || array_to_string(list_transform(g.missing_days, lambda d: strftime(d, '%Y-%m-%d')), ', ')
                         ELSE '' END
            END
        || coalesce(' (account ' || g.bank_account || ')', ''), '; ' ORDER BY g.file_name)
        || '; not evaluated from ' || strftime(min(g.span_from), '%Y-%m-%d') || ' to '
        || strftime(max(g.span_to), '%Y-%m-%d') AS detail
FROM bank_gaps AS g
GROUP BY g.currency, g.first_missing
