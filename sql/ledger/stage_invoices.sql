-- Books invoices as read (temp table ledger_input), typed, with the reason a row is refused.
-- Parameters: $amounts, $decimal, $map_from, $map_to, $statuses.
CREATE OR REPLACE TEMP TABLE ledger_stage AS
WITH typed AS (
    SELECT
        i.*,
        nullif(trim(i.invoice_id), '') AS invoice_id_t,
        nullif(trim(i.customer_id), '') AS customer_id_t,
        ledger_amount_digits(i.amount, $decimal) AS amount_t,
        upper(trim(i.currency)) AS code,
        c.code AS known,
        c.exponent,
        ledger_status(i.status, $map_from, $map_to) AS status_t
    FROM ledger_input AS i
    LEFT JOIN currencies AS c ON c.code = upper(trim(i.currency))
),
checked AS (
    SELECT
        *,
        ledger_amount_minor(amount_t, $amounts, exponent) AS amount_minor_t,
        concat_ws('; ',
            CASE WHEN invoice_id_t IS NULL THEN 'no invoice_id' END,
            ledger_amount_problem(amount, amount_t, $amounts, known, exponent),
            ledger_currency_problem(currency, code, known, exponent),
            ledger_status_problem(status, status_t, $statuses, '[ledger.invoices]')
        ) AS problem
    FROM typed
)
SELECT
    *,
    CASE
        WHEN problem <> '' THEN problem
        WHEN row_number() OVER same_key > 1
            THEN 'duplicate invoice_id ' || invoice_id_t || ' (first at ' || first_value(_source) OVER same_key
                 || ' row ' || first_value(_row) OVER same_key || ')'
    END AS reason
FROM checked
WINDOW same_key AS (PARTITION BY problem = '', invoice_id_t ORDER BY _part, _row)
