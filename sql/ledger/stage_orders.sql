-- Books orders as read (an order is known by its reference, else its order_id) (temp table ledger_input: _part, _source, _row and text fields)
-- typed, with the reason a row is refused (NULL: loaded). Parameters: $amounts, $decimal,
-- $map_from, $map_to, $statuses. Needs `currencies` and sql/ledger/macros.sql.
-- Reasons are spelt out only for rows that fail a cheap test, and only references that occur
-- twice are sorted, so that a million clean rows cost little.
CREATE OR REPLACE TEMP TABLE ledger_stage AS
WITH typed AS (
    SELECT
        i.*,
        nullif(trim(i.reference), '') AS reference_t,
        nullif(trim(i.order_id), '') AS order_id_t,
        coalesce(nullif(trim(i.reference), ''), nullif(trim(i.order_id), '')) AS key_t,
        nullif(trim(i.payment_reference), '') AS payment_reference_t,
        ledger_amount_text(i.amount, $decimal) AS amount_t,
        upper(trim(i.currency)) AS code,
        c.code AS known,
        c.exponent,
        ledger_status(i.status, $map_from, $map_to) AS status_t,
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
            WHEN key_t IS NOT NULL AND amount_minor_t >= 0 AND known IS NOT NULL
                 AND list_contains($statuses, status_t) AND created_at_t IS NOT NULL THEN NULL
            ELSE concat_ws('; ',
                CASE WHEN key_t IS NULL THEN 'no reference and no order_id' END,
                coalesce(ledger_amount_mark_problem(amount, $decimal),
                    ledger_amount_problem(amount, amount_ok, amount_decimals, amount_minor_t, $amounts, known, exponent)),
                ledger_currency_problem(currency, code, known, exponent),
                ledger_status_problem(status, status_t, $statuses, '[ledger.orders]'),
                ledger_time_problem(created_at, created_at_t))
        END AS problem
    FROM minor
),
twice AS (
    SELECT key_t FROM checked WHERE problem IS NULL GROUP BY key_t HAVING count(*) > 1
),
later AS (
    SELECT _part, _row,
           CASE WHEN reference_t IS NULL THEN 'duplicate order_id ' ELSE 'duplicate reference ' END
               || key_t || ' (first at ' || first_value(_source) OVER same_key
               || ' row ' || first_value(_row) OVER same_key || ')' AS duplicate
    FROM checked
    WHERE problem IS NULL AND key_t IN (SELECT key_t FROM twice)
    WINDOW same_key AS (PARTITION BY key_t ORDER BY _part, _row)
    QUALIFY row_number() OVER same_key > 1
)
SELECT c.*, coalesce(c.problem, l.duplicate) AS reason
FROM checked AS c
LEFT JOIN later AS l ON l._part = c._part AND l._row = c._row
