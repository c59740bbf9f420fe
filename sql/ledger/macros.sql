-- Exact conversion of the books' amounts (recon.ledger.loading), as macros the stage files
-- share. Nothing is ever rounded: a value with more decimals than the currency's ISO 4217
-- exponent is refused. The stage files compute the text, its validity and its decimals
-- once per row (as columns), and the macros below work on those.
--   t = ledger_amount_text('12,50', ',') = '12.50'    ledger_amount_decimals(t) = '5'
--   ledger_amount_minor(t, true, '5', 'major', 2) = 1250
-- With a decimal comma, a '.' in an amount is refused, never read as the decimal point:
-- '1.234' may be one thousand two hundred and thirty-four (a thousands separator) as well as
-- one point two three four, and a BHD amount read the wrong way is 1,000 times too small.
CREATE OR REPLACE MACRO ledger_amount_text(value, decimal_mark) AS
    CASE WHEN decimal_mark = ',' AND contains(trim(value), '.') THEN NULL
         WHEN decimal_mark = ',' THEN replace(trim(value), ',', '.') ELSE trim(value) END;
CREATE OR REPLACE MACRO ledger_amount_mark_problem(raw_value, decimal_mark) AS
    CASE WHEN decimal_mark = ',' AND contains(trim(raw_value), '.')
         THEN 'amount ''' || left(raw_value, 40) || ''' has a ''.'' but the books'' decimal mark is '','' '
              || '(a thousands separator? write the amount without one): refused, not guessed'
    END;
CREATE OR REPLACE MACRO ledger_amount_ok(t) AS coalesce(regexp_full_match(t, '[+-]?[0-9]+(\.[0-9]*)?'), false);
-- The decimals that matter: trailing zeros dropped (12.50 has one, 12.00 none).
CREATE OR REPLACE MACRO ledger_amount_decimals(t) AS rtrim(split_part(t, '.', 2), '0');
CREATE OR REPLACE MACRO ledger_amount_minor(t, ok, decimals, amounts, exponent) AS
    CASE
        WHEN NOT ok OR exponent IS NULL THEN NULL
        WHEN amounts = 'minor' AND decimals <> '' THEN NULL
        WHEN amounts = 'major' AND length(decimals) > exponent THEN NULL
        ELSE (CASE WHEN starts_with(t, '-') THEN -1 ELSE 1 END) * TRY_CAST(
            ltrim(split_part(t, '.', 1), '+-')
            || CASE WHEN amounts = 'major' THEN rpad(decimals, exponent, '0') ELSE '' END
            AS BIGINT)
    END;
-- Why an amount is refused (NULL when it converts); `minor` is ledger_amount_minor's result.
CREATE OR REPLACE MACRO ledger_amount_problem(raw_value, ok, decimals, minor, amounts, code, exponent) AS
    CASE
        WHEN raw_value IS NULL OR trim(raw_value) = '' THEN 'no amount'
        WHEN NOT ok THEN 'amount ''' || left(raw_value, 40) || ''' is not a number'
        WHEN code IS NULL OR exponent IS NULL THEN NULL  -- the currency's own problem says why
        WHEN amounts = 'minor' AND decimals <> ''
            THEN 'amount ''' || left(raw_value, 40) || ''' is not a whole number of minor units'
        WHEN amounts = 'major' AND length(decimals) > exponent
            THEN 'amount ''' || left(raw_value, 40) || ''' has ' || length(decimals)
                 || ' decimals; ' || code || ' has ' || exponent || ' (never rounded)'
        WHEN minor IS NULL THEN 'amount ''' || left(raw_value, 40) || ''' is too large'
        WHEN minor < 0 THEN 'amount ''' || left(raw_value, 40) || ''' is negative'
    END;
CREATE OR REPLACE MACRO ledger_currency_problem(raw_value, code, known, exponent) AS
    CASE
        WHEN raw_value IS NULL OR trim(raw_value) = '' THEN 'no currency'
        WHEN known IS NULL THEN 'currency ''' || left(raw_value, 20) || ''' is not an ISO 4217 code'
        WHEN exponent IS NULL THEN 'currency ' || code || ' has no minor unit'
    END;
-- A status mapped through the books' status map (identity for words it does not name).
CREATE OR REPLACE MACRO ledger_status(raw_value, map_from, map_to) AS
    coalesce(map_to[list_position(map_from, lower(trim(raw_value)))], lower(trim(raw_value)));
CREATE OR REPLACE MACRO ledger_status_problem(raw_value, mapped, statuses, section) AS
    CASE
        WHEN raw_value IS NULL OR trim(raw_value) = '' THEN 'no status'
        WHEN NOT list_contains(statuses, mapped)
            THEN 'status ''' || left(raw_value, 40) || ''' is not one of ' || array_to_string(statuses, ', ')
                 || ' (map it in ' || section || ' status_map)'
    END;
CREATE OR REPLACE MACRO ledger_time_problem(raw_value, parsed) AS
    CASE
        WHEN raw_value IS NULL OR trim(raw_value) = '' THEN 'no created_at'
        WHEN parsed IS NULL THEN 'created_at ''' || left(raw_value, 40) || ''' is not a date or date-time'
    END;
