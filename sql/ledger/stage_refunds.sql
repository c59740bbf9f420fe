-- Books refunds as read (temp table ledger_input), typed, with the reason a row is refused.
-- Parameters: $amounts, $decimal. A refund names its payment by payment_id or reference.
CREATE OR REPLACE TEMP TABLE ledger_stage AS
WITH typed AS (
    SELECT
        i.*,
        nullif(trim(i.refund_id), '') AS refund_id_t,
        nullif(trim(i.payment_id), '') AS payment_id_t,
        nullif(trim(i.reference), '') AS reference_t,
        ledger_amount_digits(i.amount, $decimal) AS amount_t,
        upper(trim(i.currency)) AS code,
        c.code AS known,
        c.exponent,
        TRY_CAST(trim(i.created_at) AS TIMESTAMPTZ) AS created_at_t
    FROM ledger_input AS i
    LEFT JOIN currencies AS c ON c.code = upper(trim(i.currency))
),
checked AS (
    SELECT
        *,
        ledger_amount_minor(amount_t, $amounts, exponent) AS amount_minor_t,
        concat_ws('; ',
            CASE WHEN payment_id_t IS NULL AND reference_t IS NULL
                 THEN 'neither payment_id nor reference' END,
            ledger_amount_problem(amount, amount_t, $amounts, known, exponent),
            ledger_currency_problem(currency, code, known, exponent),
            ledger_time_problem(created_at, created_at_t)
        ) AS problem
    FROM typed
)
SELECT
    *,
    CASE
        WHEN problem <> '' THEN problem
        WHEN refund_id_t IS NOT NULL AND row_number() OVER same_key > 1
            THEN 'duplicate refund_id ' || refund_id_t || ' (first at ' || first_value(_source) OVER same_key
                 || ' row ' || first_value(_row) OVER same_key || ')'
    END AS reason
FROM checked
WINDOW same_key AS (PARTITION BY problem = '', refund_id_t ORDER BY _part, _row)
