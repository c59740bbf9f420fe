-- Migration 0200 (issue 20): matching that finance can trust.
-- A finding that comes back keeps its first sighting: state `reopened`, and how many times it
-- came back. `item_at` is the business date of the item a finding is about (the order's,
-- payment's, refund's or invoice's own date): the first of the two ages (findings_current:
-- item_age_days, known_days).
ALTER TABLE findings ADD COLUMN IF NOT EXISTS reopen_count INTEGER DEFAULT 0;
ALTER TABLE findings ADD COLUMN IF NOT EXISTS item_at TIMESTAMPTZ;
-- An order may have no reference (it is then known by its order_id) and may name the
-- reference its payment was made under (several orders paid by one checkout).
ALTER TABLE ledger_orders ALTER COLUMN reference DROP NOT NULL;
ALTER TABLE ledger_orders ADD COLUMN IF NOT EXISTS payment_reference VARCHAR;
-- A books input that suddenly holds far less than before is suspect (why, in words); one
-- accepted for the night says by whom and why; a workbook's sheets that were not read.
ALTER TABLE ledger_loads ADD COLUMN IF NOT EXISTS suspect VARCHAR;
ALTER TABLE ledger_loads ADD COLUMN IF NOT EXISTS accepted VARCHAR;
ALTER TABLE ledger_loads ADD COLUMN IF NOT EXISTS unread_sheets VARCHAR;
-- Each order's (and unmatched payment's) match: the rule that made it, the difference kept
-- (books - provider) when matched within tolerance or by hand, which fields differ for a
-- break, and the best candidate on the other side.
ALTER TABLE ledger_matches ADD COLUMN IF NOT EXISTS rule VARCHAR;
ALTER TABLE ledger_matches ADD COLUMN IF NOT EXISTS difference_minor BIGINT;
ALTER TABLE ledger_matches ADD COLUMN IF NOT EXISTS differs VARCHAR;
ALTER TABLE ledger_matches ADD COLUMN IF NOT EXISTS best_candidate VARCHAR;
-- Every link the matching rules made (sql/matching/*.sql), one row per order and payment.
CREATE TABLE IF NOT EXISTS ledger_links (
    order_key      VARCHAR NOT NULL,          -- the order's reference, else its order_id
    payment_id     VARCHAR NOT NULL,
    rule           VARCHAR NOT NULL,          -- manual | exact_reference | normalised_reference | amount_tolerance | payment_reference
    priority       INTEGER NOT NULL,
    run_id         VARCHAR NOT NULL
);
-- Proposed matches for what no rule matched (rule suggested_match): an unmatched order and
-- an unmatched settled payment, same currency, amount within tolerance, dates within the
-- window. `candidates` counts the equally good candidates: more than one is ambiguous.
CREATE TABLE IF NOT EXISTS ledger_suggestions (
    order_key      VARCHAR NOT NULL,
    payment_id     VARCHAR NOT NULL,
    score          INTEGER NOT NULL,
    reasons        VARCHAR NOT NULL,
    candidates     INTEGER NOT NULL,          -- candidates at this score for the order
    rivals         INTEGER NOT NULL,          -- orders at their best score for this payment
    run_id         VARCHAR NOT NULL
);
-- The people's matches (`recon match`), as the audit trail holds them, and whether each held
-- tonight: applied, or lapsed (a side disappeared or changed its amount) with the reason.
CREATE TABLE IF NOT EXISTS ledger_manual_matches (
    order_key      VARCHAR NOT NULL,
    payment_ids    VARCHAR[] NOT NULL,
    who            VARCHAR,
    matched_at     TIMESTAMPTZ,
    note           VARCHAR,
    state          VARCHAR NOT NULL,          -- applied | lapsed
    reason         VARCHAR,                   -- why it lapsed
    run_id         VARCHAR NOT NULL
);
