-- Exact conversion of the books' amounts (recon.ledger.loading), as macros the stage files
-- share. An amount is text as read; `decimal_mark` is '.' or ','. Nothing is ever rounded:
-- a value with more decimals than the currency's ISO 4217 exponent is refused.
--   ledger_amount_digits('12.50', '.')  = '12.50'     ledger_amount_fraction('12.50') = '5'
--   ledger_amount_minor('12.50', 'major', 2) = 1250   ledger_amount_minor('12.50', 'minor', 2) = NULL
CREATE OR REPLACE MACRO ledger_amount_digits(value, decimal_mark) AS
    CASE WHEN decimal_mark = ',' THEN replace(trim(value), ',', '.') ELSE trim(value) END;
CREATE OR REPLACE MACRO ledger_amount_is_number(t) AS
    regexp_full_match(t, '[+-]?[0-9]+(\.[0-9]*)?');
-- The decimals that matter (trailing zeros dropped: 12.50 has one, 12.00 none).
CREATE OR REPLACE MACRO ledger_amount_fraction(t) AS
    rtrim(regexp_extract(t, '\.([0-9]*)$', 1), '0');
CREATE OR REPLACE MACRO ledger_amount_minor(t, amounts, exponent) AS
    CASE
        WHEN NOT ledger_amount_is_number(t) OR exponent IS NULL THEN NULL
        WHEN amounts = 'minor' AND ledger_amount_fraction(t) <> '' THEN NULL
        WHEN amounts = 'major' AND length(ledger_amount_fraction(t)) > exponent THEN NULL
        ELSE (CASE WHEN starts_with(t, '-') THEN -1 ELSE 1 END) * TRY_CAST(
            regexp_extract(t, '^[+-]?([0-9]+)', 1)
            || CASE WHEN amounts = 'major' THEN rpad(ledger_amount_fraction(t), exponent, '0') ELSE '' END
            AS BIGINT)
    END;
-- Why an amount is refused (NULL when it converts).
CREATE OR REPLACE MACRO ledger_amount_problem(raw_value, t, amounts, code, exponent) AS
    CASE
        WHEN raw_value IS NULL OR trim(raw_value) = '' THEN 'no amount'
        WHEN NOT ledger_amount_is_number(t)
            THEN 'amount ''' || left(raw_value, 40) || ''' is not a number'
        WHEN code IS NULL OR exponent IS NULL THEN NULL  -- the currency's own problem says why
        WHEN amounts = 'minor' AND ledger_amount_fraction(t) <> ''
            THEN 'amount ''' || left(raw_value, 40) || ''' is not a whole number of minor units'
        WHEN amounts = 'major' AND length(ledger_amount_fraction(t)) > exponent
            THEN 'amount ''' || left(raw_value, 40) || ''' has ' || length(ledger_amount_fraction(t))
                 || ' decimals; ' || code || ' has ' || exponent || ' (never rounded)'
        WHEN ledger_amount_minor(t, amounts, exponent) IS NULL
            THEN 'amount ''' || left(raw_value, 40) || ''' is too large'
        WHEN starts_with(t, '-') AND ledger_amount_minor(t, amounts, exponent) <> 0
            THEN 'amount ''' || left(raw_value, 40) || ''' is negative'
    END;
CREATE OR REPLACE MACRO ledger_currency_problem(raw_value, code, known, exponent) AS
    CASE
        WHEN raw_value IS NULL OR trim(raw_value) = '' THEN 'no currency'
        WHEN known IS NULL THEN 'currency ''' || left(raw_value, 20) || ''' is not an ISO 4217 code'
        WHEN exponent IS NULL THEN 'currency ' || code || ' has no minor unit'
    END;
-- A status mapped through the books' status map (identity for words it does not name).
CREATE OR REPLACE MACRO ledger_status(raw_value, map_from, map_to) AS
    CASE
        WHEN list_position(map_from, lower(trim(raw_value))) IS NOT NULL
            THEN map_to[list_position(map_from, lower(trim(raw_value)))]
        ELSE lower(trim(raw_value))
    END;
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
