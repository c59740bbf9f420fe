-- Books orders as read (temp table ledger_input: _part, _source, _row and text fields)
-- typed, with the reason a row is refused (NULL: loaded). Parameters: $amounts, $decimal,
-- $map_from, $map_to, $statuses. Needs `currencies` and sql/ledger/macros.sql.
CREATE OR REPLACE TEMP TABLE ledger_stage AS
WITH typed AS (
    SELECT
        i.*,
        nullif(trim(i.reference), '') AS reference_t,
        nullif(trim(i.order_id), '') AS order_id_t,
        ledger_amount_digits(i.amount, $decimal) AS amount_t,
        upper(trim(i.currency)) AS code,
        c.code AS known,
        c.exponent,
        ledger_status(i.status, $map_from, $map_to) AS status_t,
        TRY_CAST(trim(i.created_at) AS TIMESTAMPTZ) AS created_at_t
    FROM ledger_input AS i
    LEFT JOIN currencies AS c ON c.code = upper(trim(i.currency))
),
checked AS (
    SELECT
        *,
        ledger_amount_minor(amount_t, $amounts, exponent) AS amount_minor_t,
        concat_ws('; ',
            CASE WHEN reference_t IS NULL THEN 'no reference' END,
            ledger_amount_problem(amount, amount_t, $amounts, known, exponent),
            ledger_currency_problem(currency, code, known, exponent),
            ledger_status_problem(status, status_t, $statuses, '[ledger.orders]'),
            ledger_time_problem(created_at, created_at_t)
        ) AS problem
    FROM typed
)
SELECT
    *,
    CASE
        WHEN problem <> '' THEN problem
        WHEN row_number() OVER same_key > 1
            THEN 'duplicate reference ' || reference_t || ' (first at ' || first_value(_source) OVER same_key
                 || ' row ' || first_value(_row) OVER same_key || ')'
    END AS reason
FROM checked
WINDOW same_key AS (PARTITION BY problem = '', reference_t ORDER BY _part, _row)
