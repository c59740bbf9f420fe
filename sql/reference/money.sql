-- Money formatting for check details, exact: integer // and % on minor units, never a float
-- or a DECIMAL division. Needs the `currencies(code, exponent, name)` table (recon.currency).
--   recon_money(1234, 'EUR') = 'EUR 12.34';  recon_money(123456, 'JPY') = 'JPY 123,456'
--   recon_money(5, 'XYZ') = 'XYZ 5 (minor units)'  (not ISO 4217: cannot be scaled)
CREATE OR REPLACE MACRO recon_minor_text(amount_minor, exponent) AS
    CASE
        WHEN amount_minor IS NULL THEN '?'
        WHEN exponent IS NULL THEN format('{:,}', amount_minor) || ' (minor units)'
        WHEN exponent = 0 THEN format('{:,}', amount_minor)
        ELSE (CASE WHEN amount_minor < 0 THEN '-' ELSE '' END)
            || format('{:,}', abs(amount_minor) // CAST(pow(10, exponent) AS BIGINT))
            || '.'
            || lpad(CAST(abs(amount_minor) % CAST(pow(10, exponent) AS BIGINT) AS VARCHAR), exponent, '0')
    END;
CREATE OR REPLACE MACRO recon_money(amount_minor, currency) AS
    coalesce(currency, '(no currency)') || ' '
    || recon_minor_text(amount_minor, (SELECT c.exponent FROM currencies c WHERE c.code = currency));
