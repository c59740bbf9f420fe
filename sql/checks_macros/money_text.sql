-- recon_money for the checks (recon.checks.runner): a TEMP macro of the same name that
-- shadows sql/reference/money.sql's, with the same text for every amount and currency.
-- The reference macro looks the exponent up with a subquery on `currencies` inside
-- recon_minor_text, which spells it five times: five correlated subqueries to plan and join
-- in every recon_money of a check. Here the `currencies` rows are written in, one branch per
-- exponent (the most common first) calling recon_minor_text with a constant exponent, chosen
-- by an exact search of ',CODE,' in the codes of that exponent: codes are three letters, so
-- only a whole code matches; a currency that is not one, or NULL, gets the NULL exponent's
-- text, as the subquery's no row does. The branches are the line below "each exponent", once
-- per exponent with its codes (comma-separated) and the exponent formatted in.
CREATE OR REPLACE TEMP MACRO recon_money(amount_minor, currency) AS
    coalesce(currency, '(no currency)') || ' '
    || CASE WHEN length(currency) = 3
            THEN CASE {branches} ELSE recon_minor_text(amount_minor, NULL) END
            ELSE recon_minor_text(amount_minor, NULL) END
-- each exponent
WHEN strpos(',{codes},', ',' || currency || ',') > 0 THEN recon_minor_text(amount_minor, {exponent})
