-- Money formatting for check details, exact: integer // and % on minor units, never a float
-- or a DECIMAL division. Needs the `currencies(code, exponent, name)` table (recon.money.currency).
--   recon_money(1234, 'EUR') = 'EUR 12.34';  recon_money(123456, 'JPY') = 'JPY 123,456'
--   recon_money(5, 'XYZ') = 'XYZ 5 (minor units)'  (not ISO 4217: cannot be scaled)
-- abs() in HUGEINT: abs(-2^63) overflows a BIGINT, and one such amount must not error a check.
CREATE OR REPLACE MACRO recon_minor_text(amount_minor, exponent) AS
    CASE
        WHEN amount_minor IS NULL THEN '?'
        WHEN exponent IS NULL THEN format('{:,}', amount_minor) || ' (minor units)'
        WHEN exponent = 0 THEN format('{:,}', amount_minor)
        ELSE (CASE WHEN amount_minor < 0 THEN '-' ELSE '' END)
            || format('{:,}', abs(amount_minor::HUGEINT) // CAST(pow(10, exponent) AS BIGINT))
            || '.'
            || lpad(CAST(abs(amount_minor::HUGEINT) % CAST(pow(10, exponent) AS BIGINT) AS VARCHAR), exponent, '0')
    END;
CREATE OR REPLACE MACRO recon_money(amount_minor, currency) AS
    coalesce(currency, '(no currency)') || ' '
    || recon_minor_text(amount_minor, (SELECT c.exponent FROM currencies c WHERE c.code = currency));
-- money(amount_minor, currency): the amount in major units as an exact DECIMAL(38, 4), scaled
-- by the currency's ISO 4217 exponent (the `currencies` table, from recon.money.currency): minor
-- units times a DECIMAL literal 1, 0.1, … 0.0001, never a float. NULL when the currency has
-- no exponent (XAU, a code that is not ISO 4217) or the amount is NULL. Scale 4 holds every
-- ISO exponent (0 to 4); `round(money(a, c), exponent)` shows the currency's own digits.
--   money(1234, 'EUR') = 12.3400;  money(123456, 'JPY') = 123456.0000;  money(1234, 'BHD') = 1.2340
CREATE OR REPLACE MACRO money(amount_minor, currency) AS
    CAST(CAST(amount_minor AS DECIMAL(38, 0))
         * CASE (SELECT c.exponent FROM currencies c WHERE c.code = currency)
               WHEN 0 THEN CAST(1 AS DECIMAL(5, 4))
               WHEN 1 THEN CAST(0.1 AS DECIMAL(5, 4))
               WHEN 2 THEN CAST(0.01 AS DECIMAL(5, 4))
               WHEN 3 THEN CAST(0.001 AS DECIMAL(5, 4))
               WHEN 4 THEN CAST(0.0001 AS DECIMAL(5, 4))
           END AS DECIMAL(38, 4));
