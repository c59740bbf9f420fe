-- Books refunds as read (temp table ledger_input), typed, with the reason a row is refused.
-- Parameters: $amounts, $decimal. A refund names its payment by payment_id or reference.
CREATE OR REPLACE TEMP TABLE ledger_stage AS
WITH typed AS (
    SELECT
        i.*,
        nullif(trim(i.refund_id), '') AS refund_id_t,
        nullif(trim(i.payment_id), '') AS payment_id_t,
        nullif(trim(i.reference), '') AS reference_t,
        ledger_amount_text(i.amount, $decimal) AS amount_t,
        upper(trim(i.currency)) AS code,
        c.code AS known,
        c.exponent,
        TRY_CAST(trim(i.created_at) AS TIMESTAMPTZ) AS created_at_t
    FROM ledger_input AS i
    LEFT JOIN currencies AS c ON c.code = upper(trim(i.currency))
),
parts AS (
    SELECT *, ledger_amount_ok(amount_t) AS amount_ok, ledger_amount_decimals(amount_t) AS amount_decimals
    FROM typed
),
minor AS (
    SELECT *, ledger_amount_minor(amount_t, amount_ok, amount_decimals, $amounts, exponent) AS amount_minor_t
    FROM parts
),
checked AS (
    SELECT
        *,
        CASE
            WHEN _unread IS NOT NULL THEN _unread  -- a line that is no row (sources.py)
            WHEN (payment_id_t IS NOT NULL OR reference_t IS NOT NULL) AND amount_minor_t >= 0
                 AND known IS NOT NULL AND created_at_t IS NOT NULL THEN NULL
            ELSE concat_ws('; ',
                CASE WHEN payment_id_t IS NULL AND reference_t IS NULL
                     THEN 'neither payment_id nor reference' END,
                coalesce(ledger_amount_mark_problem(amount, $decimal),
                    ledger_amount_problem(amount, amount_ok, amount_decimals, amount_minor_t, $amounts, known, exponent)),
                ledger_currency_problem(currency, code, known, exponent),
                ledger_time_problem(created_at, created_at_t))
        END AS problem
    FROM minor
),
twice AS (
    SELECT refund_id_t FROM checked
    WHERE problem IS NULL AND refund_id_t IS NOT NULL
    GROUP BY refund_id_t HAVING count(*) > 1
),
later AS (
    SELECT _part, _row,
           'duplicate refund_id ' || refund_id_t || ' (first at ' || first_value(_source) OVER same_key
               || ' row ' || first_value(_row) OVER same_key || ')' AS duplicate
    FROM checked
    WHERE problem IS NULL AND refund_id_t IN (SELECT refund_id_t FROM twice)
    WINDOW same_key AS (PARTITION BY refund_id_t ORDER BY _part, _row)
    QUALIFY row_number() OVER same_key > 1
)
SELECT c.*, coalesce(c.problem, l.duplicate) AS reason
FROM checked AS c
LEFT JOIN later AS l ON l._part = c._part AND l._row = c._row
