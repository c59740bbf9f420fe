-- Statements whose balances do not chain (docs/bank.md, bank_statement_gap): per account and
-- currency in date order, an opening balance that is not the previous closing, a business
-- day with no statement between two that have one, or a statement whose lines do not add up
-- from its opening to its closing balance. The span (the day after the previous statement
-- to this statement's day) is not evaluated: no settlement due in it is missing or passed.
-- Reads: bank_statements, bank_days. Writes: bank_gaps.
DELETE FROM bank_gaps;
INSERT INTO bank_gaps BY NAME
WITH s AS (
    SELECT *,
           lag(statement_date) OVER w AS previous_date,
           lag(closing_minor) OVER w AS previous_closing_minor,
           lag(file_name) OVER w AS previous_file
    FROM bank_statements
    WHERE statement_date IS NOT NULL
    WINDOW w AS (PARTITION BY bank_account, currency ORDER BY statement_date, file_name, statement_no)
), missing AS (
    SELECT s.bank_account, s.currency, s.statement_date, s.file_name, s.statement_no,
           list(d.day ORDER BY d.day) AS days
    FROM s
    JOIN bank_days AS d ON d.business AND d.day > s.previous_date AND d.day < s.statement_date
    GROUP BY ALL
)
SELECT s.currency, s.bank_account,
       coalesce(m.days[1], s.statement_date) AS first_missing,
       s.previous_date + 1 AS span_from,
       s.statement_date AS span_to,
       s.previous_file, s.previous_date, s.previous_closing_minor,
       s.file_name, s.statement_date, s.opening_minor,
       s.opening_minor - s.previous_closing_minor AS difference_minor,
       coalesce(m.days, []) AS missing_days,
       CASE WHEN s.opening_minor <> s.previous_closing_minor THEN 'balance_break'
            ELSE 'missing_day' END AS kind
FROM s
LEFT JOIN missing AS m
    ON m.bank_account IS NOT DISTINCT FROM s.bank_account AND m.currency = s.currency
   AND m.statement_date = s.statement_date AND m.file_name = s.file_name
   AND m.statement_no = s.statement_no
WHERE s.previous_date IS NOT NULL
  AND (m.days IS NOT NULL OR s.opening_minor <> s.previous_closing_minor)
UNION ALL
SELECT currency, bank_account, statement_date AS first_missing, statement_date AS span_from,
       statement_date AS span_to, NULL, NULL, NULL, file_name, statement_date, opening_minor,
       closing_minor - opening_minor - lines_minor AS difference_minor, [] AS missing_days,
       'lines_do_not_add_up' AS kind
FROM bank_statements
WHERE statement_date IS NOT NULL AND closing_minor <> opening_minor + lines_minor;
