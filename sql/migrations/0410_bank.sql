-- Migration 0410 (issue 41): the bank leg — did the money arrive? (docs/bank.md)
-- Snapshots of the statements RECON_BANK_STATEMENTS names (replaced every night that reads
-- them), the business-day calendar, the balance gaps, and each expected settlement with what
-- was found for it. Filled by recon.bank.loading with sql/bank/*.sql.
CREATE TABLE IF NOT EXISTS bank_statements (
    file_name      VARCHAR NOT NULL,          -- the statement file's name (findings name it)
    source_file    VARCHAR NOT NULL,          -- its path as read
    format         VARCHAR NOT NULL,          -- camt053 | mt940 | bai2 | csv
    statement_no   INTEGER NOT NULL,          -- where it starts: line (MT940, BAI2, CSV) or ordinal (CAMT)
    bank_account   VARCHAR,
    currency       VARCHAR NOT NULL,
    statement_date DATE,                      -- the closing balance's date; NULL for a CSV
    first_date     DATE,
    last_date      DATE,
    opening_minor  BIGINT,
    closing_minor  BIGINT,
    line_count     INTEGER NOT NULL,
    lines_minor    BIGINT NOT NULL,           -- the sum of its lines (signed)
    run_id         VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS bank_lines (
    file_name      VARCHAR NOT NULL,
    line_no        INTEGER NOT NULL,          -- line in the file, or CAMT entry ordinal
    source_file    VARCHAR NOT NULL,
    format         VARCHAR NOT NULL,
    bank_account   VARCHAR,
    currency       VARCHAR NOT NULL,
    statement_date DATE,
    booking_date   DATE NOT NULL,
    value_date     DATE NOT NULL,
    amount_minor   BIGINT NOT NULL,           -- signed: credits > 0
    counterparty   VARCHAR,
    remittance     VARCHAR,
    reference      VARCHAR,
    is_provider    BOOLEAN NOT NULL,          -- RECON_BANK_PROVIDER_MATCH matched
    settlement_id  VARCHAR,                   -- <CUR>:<D> of the settlement it was matched to
    match_state    VARCHAR,                   -- received | mismatch | candidate | unexpected (provider credits)
    run_id         VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS bank_days (
    day            DATE NOT NULL,
    business       BOOLEAN NOT NULL,
    business_day   DATE NOT NULL,             -- the business day the day's payments belong to
    bday_no        INTEGER NOT NULL,          -- business days counted up to this day
    holiday        VARCHAR                    -- the holiday's name (calendar), if any
);
CREATE TABLE IF NOT EXISTS bank_gaps (
    currency       VARCHAR NOT NULL,
    bank_account   VARCHAR,
    first_missing  DATE NOT NULL,
    span_from      DATE NOT NULL,
    span_to        DATE NOT NULL,
    previous_file  VARCHAR,
    previous_date  DATE,
    previous_closing_minor BIGINT,
    file_name      VARCHAR NOT NULL,
    statement_date DATE NOT NULL,
    opening_minor  BIGINT,
    difference_minor BIGINT,
    missing_days   DATE[],
    kind           VARCHAR NOT NULL           -- missing_day | balance_break | lines_do_not_add_up
);
CREATE TABLE IF NOT EXISTS bank_settlements (
    settlement_id  VARCHAR NOT NULL,          -- <CUR>:<YYYY-MM-DD>
    currency       VARCHAR NOT NULL,
    business_day   DATE NOT NULL,
    payments       BIGINT NOT NULL,
    gross_minor    BIGINT NOT NULL,
    refunds        BIGINT NOT NULL,
    refunds_minor  BIGINT NOT NULL,
    fees_minor     BIGINT,                    -- NULL when fees = "unknown"
    net_minor      BIGINT NOT NULL,
    tolerance_minor BIGINT NOT NULL,
    pay_date       DATE NOT NULL,
    deadline       DATE NOT NULL,
    state          VARCHAR NOT NULL,          -- received | mismatch | ambiguous | missing | in_transit | not_evaluated | not_covered | nothing_due
    reason         VARCHAR,
    credit         VARCHAR,                   -- <file name>:<line> of the credit found
    value_date     DATE,
    received_minor BIGINT,
    difference_minor BIGINT,                  -- received - expected
    candidates     VARCHAR,                   -- ties: every candidate credit, none picked
    run_id         VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS bank_loads (
    run_id         VARCHAR NOT NULL,
    source         VARCHAR NOT NULL,
    files          INTEGER NOT NULL,
    statements     INTEGER NOT NULL,
    lines          BIGINT NOT NULL,
    provider_lines BIGINT NOT NULL,
    duplicates     INTEGER NOT NULL,
    first_date     DATE,
    last_date      DATE,
    calendar       VARCHAR,
    loaded_at      TIMESTAMPTZ NOT NULL
);
