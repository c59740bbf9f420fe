-- Analysts' views: the tables with money that are not resources of the catalogue, plus the
-- amount in major units beside each `*_minor` column, exact (money() in
-- sql/reference/money.sql: DECIMAL(38, 4), never a float). `raw` (the record as received,
-- with personal data) is left out: it stays in the table itself. The resources' own views
-- (`payments_major`, `invoices_major`, …) are generated from the catalogue
-- (sql/catalogue/money_view.sql). Created on every publish (recon.warehouse.working_copy), so they are
-- always current.
CREATE OR REPLACE VIEW record_versions_major AS
SELECT * EXCLUDE (raw), money(amount_minor, currency) AS amount FROM record_versions;
CREATE OR REPLACE VIEW findings_major AS
SELECT *, money(amount_minor, currency) AS amount FROM findings;
CREATE OR REPLACE VIEW ledger_orders_major AS
SELECT *, money(amount_minor, currency) AS amount FROM ledger_orders;
CREATE OR REPLACE VIEW ledger_refunds_major AS
SELECT *, money(amount_minor, currency) AS amount FROM ledger_refunds;
CREATE OR REPLACE VIEW ledger_invoices_major AS
SELECT *, money(amount_minor, currency) AS amount FROM ledger_invoices;
CREATE OR REPLACE VIEW ledger_matches_major AS
SELECT *,
    money(books_amount_minor, books_currency) AS books_amount,
    money(provider_amount_minor, provider_currency) AS provider_amount
FROM ledger_matches;
CREATE OR REPLACE VIEW ledger_refund_matches_major AS
SELECT *,
    money(books_amount_minor, books_currency) AS books_amount,
    money(provider_amount_minor, provider_currency) AS provider_amount
FROM ledger_refund_matches;
CREATE OR REPLACE VIEW ledger_payment_refunds_major AS
SELECT *,
    money(amount_minor, currency) AS amount,
    money(books_total_minor, currency) AS books_total,
    money(books_settled_minor, currency) AS books_settled
FROM ledger_payment_refunds;
