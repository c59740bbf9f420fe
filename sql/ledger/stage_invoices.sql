-- Books invoices as read (temp table ledger_input), typed, with the reason a row is refused.
-- Parameters: $amounts, $decimal, $map_from, $map_to, $statuses.
CREATE OR REPLACE TEMP TABLE ledger_stage AS
WITH typed AS (
    SELECT
        i.*,
        nullif(trim(i.invoice_id), '') AS invoice_id_t,
        nullif(trim(i.customer_id), '') AS customer_id_t,
        ledger_amount_text(i.amount, $decimal) AS amount_t,
        upper(trim(i.currency)) AS code,
        c.code AS known,
        c.exponent,
        ledger_status(i.status, $map_from, $map_to) AS status_t
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
            WHEN invoice_id_t IS NOT NULL AND amount_minor_t >= 0 AND known IS NOT NULL
                 AND list_contains($statuses, status_t) THEN NULL
            ELSE concat_ws('; ',
                CASE WHEN invoice_id_t IS NULL THEN 'no invoice_id' END,
                coalesce(ledger_amount_mark_problem(amount, $decimal),
                    ledger_amount_problem(amount, amount_ok, amount_decimals, amount_minor_t, $amounts, known, exponent)),
                ledger_currency_problem(currency, code, known, exponent),
                ledger_status_problem(status, status_t, $statuses, '[ledger.invoices]'))
        END AS problem
    FROM minor
),
twice AS (
    SELECT invoice_id_t FROM checked WHERE problem IS NULL GROUP BY invoice_id_t HAVING count(*) > 1
),
later AS (
    SELECT _part, _row,
           'duplicate invoice_id ' || invoice_id_t || ' (first at ' || first_value(_source) OVER same_key
               || ' row ' || first_value(_row) OVER same_key || ')' AS duplicate
    FROM checked
    WHERE problem IS NULL AND invoice_id_t IN (SELECT invoice_id_t FROM twice)
    WINDOW same_key AS (PARTITION BY invoice_id_t ORDER BY _part, _row)
    QUALIFY row_number() OVER same_key > 1
)
SELECT c.*, coalesce(c.problem, l.duplicate) AS reason
FROM checked AS c
LEFT JOIN later AS l ON l._part = c._part AND l._row = c._row
