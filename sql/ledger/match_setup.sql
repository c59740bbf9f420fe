-- What the matching rules (sql/matching/*.sql, recon.ledger.matching) read: the books
-- orders and the live payments, the links made so far and what is still unmatched; the
-- tolerance of an amount (integer arithmetic: RECON_LEDGER_TOLERANCE_MINOR, or
-- RECON_LEDGER_TOLERANCE_BPS basis points of it, whichever is larger) and a reference's key
-- for rule normalised_reference (trimmed, the pattern's first group when it matches, lower case).
CREATE OR REPLACE TEMP MACRO ledger_tolerance(amount, tolerance_minor, tolerance_bps) AS
    greatest(CAST(tolerance_minor AS BIGINT),
             (abs(amount) * CAST(tolerance_bps AS BIGINT)) // 10000);
CREATE OR REPLACE TEMP MACRO ledger_reference_key(reference, pattern) AS
    lower(trim(CASE WHEN pattern = '' OR NOT regexp_matches(trim(reference), pattern)
                    THEN trim(reference)
                    ELSE regexp_extract(trim(reference), pattern, 1) END));
CREATE OR REPLACE TEMP TABLE match_orders AS
SELECT rowid AS order_row, coalesce(reference, order_id) AS order_key, reference, payment_reference, amount_minor,
       currency, status, created_at,
       status IN ('confirmed', 'partially_refunded', 'refunded') AS expects_payment
FROM ledger_orders;
CREATE OR REPLACE TEMP TABLE match_payments AS
SELECT rowid AS payment_row, id, reference, amount_minor, currency, status, created_at,
       status IN ('confirmed', 'partially_refunded', 'refunded') AS settled
FROM payments
WHERE gone_in_run IS NULL;
-- order_row / payment_row: the rowids of ledger_orders and payments in this transaction, so
-- that sql/ledger/matches.sql joins and groups on integers.
CREATE OR REPLACE TEMP TABLE match_links (
    order_key VARCHAR NOT NULL, payment_id VARCHAR NOT NULL, rule VARCHAR NOT NULL,
    priority INTEGER NOT NULL, order_row BIGINT NOT NULL, payment_row BIGINT NOT NULL
);
CREATE OR REPLACE TEMP TABLE match_proposals (
    order_key VARCHAR, payment_id VARCHAR, score INTEGER, reasons VARCHAR,
    candidates INTEGER, rivals INTEGER
);
-- What no rule linked yet: refreshed after each rule (recon.ledger.matching), so that a
-- rule reads a table, not an anti-join of a million links.
CREATE OR REPLACE TEMP TABLE unmatched_orders AS SELECT * FROM match_orders;
CREATE OR REPLACE TEMP TABLE unmatched_payments AS SELECT * FROM match_payments;
