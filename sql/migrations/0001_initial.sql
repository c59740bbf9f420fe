-- Migration 0001: the warehouse as it stood on 2026-11-23 (every CREATE is IF NOT EXISTS, so a
-- warehouse made before migrations were numbered takes it harmlessly).
-- Money is BIGINT minor units plus a currency code; never a float.
-- Each current-state table: one row per id, typed documented columns, `raw` (the record as
-- received), `first_seen_run`, `last_seen_run`, `gone_in_run` (set when a complete scan no
-- longer lists the id), `content_hash` (of raw; a change makes a new version in
-- record_versions). Ids are unique by construction (the load dedupes and replaces); no
-- PRIMARY KEY index, which made a million-row load several times slower (ART upkeep).

CREATE TABLE IF NOT EXISTS runs (
    run_id        VARCHAR PRIMARY KEY,
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ,
    status        VARCHAR NOT NULL,          -- running | complete | incomplete | failed
    reason        VARCHAR,                   -- one line when failed/incomplete
    base_url      VARCHAR,                   -- redacted
    trigger       VARCHAR,                   -- cli | schedule | sandbox | resume
    loaded_at     TIMESTAMPTZ
);

CREATE TABLE IF NOT EXISTS resource_scans (
    run_id        VARCHAR NOT NULL,
    resource      VARCHAR NOT NULL,          -- payments | refunds | disputes | subscriptions | invoices | payment_intents | payment_methods
    status        VARCHAR NOT NULL,          -- complete | incomplete | unavailable | skipped
    reason        VARCHAR,
    pages         INTEGER NOT NULL DEFAULT 0,
    records       BIGINT NOT NULL DEFAULT 0, -- distinct ids landed
    duplicates    BIGINT NOT NULL DEFAULT 0, -- ids seen again while paging (dropped)
    failed_pages  INTEGER NOT NULL DEFAULT 0,
    rejects       BIGINT NOT NULL DEFAULT 0,
    new_records   BIGINT NOT NULL DEFAULT 0,
    changed_records BIGINT NOT NULL DEFAULT 0,
    gone_records  BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, resource)
);

CREATE TABLE IF NOT EXISTS payments (
    id             VARCHAR NOT NULL,
    amount_minor   BIGINT,
    currency       VARCHAR,
    status         VARCHAR,
    reference      VARCHAR,
    created_at     TIMESTAMPTZ,
    raw            JSON NOT NULL,
    content_hash   VARCHAR NOT NULL,
    first_seen_run VARCHAR NOT NULL,
    last_seen_run  VARCHAR NOT NULL,
    gone_in_run    VARCHAR
);

CREATE TABLE IF NOT EXISTS refunds (
    id             VARCHAR NOT NULL,
    payment_id     VARCHAR,
    amount_minor   BIGINT,
    currency       VARCHAR,
    status         VARCHAR,
    created_at     TIMESTAMPTZ,
    raw            JSON NOT NULL,
    content_hash   VARCHAR NOT NULL,
    first_seen_run VARCHAR NOT NULL,
    last_seen_run  VARCHAR NOT NULL,
    gone_in_run    VARCHAR
);

CREATE TABLE IF NOT EXISTS disputes (
    id             VARCHAR NOT NULL,
    payment_id     VARCHAR,                  -- undocumented `paymentId`, when the record has one
    amount_minor   BIGINT,                   -- undocumented `amount.amountMinor`
    currency       VARCHAR,
    status         VARCHAR,
    reason         VARCHAR,
    created_at     TIMESTAMPTZ,
    raw            JSON NOT NULL,
    content_hash   VARCHAR NOT NULL,
    first_seen_run VARCHAR NOT NULL,
    last_seen_run  VARCHAR NOT NULL,
    gone_in_run    VARCHAR
);

CREATE TABLE IF NOT EXISTS subscriptions (
    id             VARCHAR NOT NULL,
    customer_id    VARCHAR,
    price_id       VARCHAR,
    status         VARCHAR,
    created_at     TIMESTAMPTZ,
    raw            JSON NOT NULL,
    content_hash   VARCHAR NOT NULL,
    first_seen_run VARCHAR NOT NULL,
    last_seen_run  VARCHAR NOT NULL,
    gone_in_run    VARCHAR
);

CREATE TABLE IF NOT EXISTS invoices (
    id               VARCHAR NOT NULL,
    customer_id      VARCHAR,
    subscription_id  VARCHAR,                -- undocumented `subscriptionId`
    status           VARCHAR,
    amount_due_minor BIGINT,
    currency         VARCHAR,
    due_date         DATE,                   -- undocumented `dueDate`, when present
    created_at       TIMESTAMPTZ,
    raw              JSON NOT NULL,
    content_hash     VARCHAR NOT NULL,
    first_seen_run   VARCHAR NOT NULL,
    last_seen_run    VARCHAR NOT NULL,
    gone_in_run      VARCHAR
);

CREATE TABLE IF NOT EXISTS payment_intents (
    id             VARCHAR NOT NULL,
    status         VARCHAR,
    capture_method VARCHAR,                  -- the spec's automatic/manual enum (`captureMethod`)
    amount_minor   BIGINT,                   -- the spec's integer field that must be >= 0 (`amount`)
    currency       VARCHAR,
    created_at     TIMESTAMPTZ,
    raw            JSON NOT NULL,
    content_hash   VARCHAR NOT NULL,
    first_seen_run VARCHAR NOT NULL,
    last_seen_run  VARCHAR NOT NULL,
    gone_in_run    VARCHAR
);

CREATE TABLE IF NOT EXISTS payment_methods (
    id             VARCHAR NOT NULL,
    customer_id    VARCHAR NOT NULL,
    type           VARCHAR,
    raw            JSON NOT NULL,
    content_hash   VARCHAR NOT NULL,
    first_seen_run VARCHAR NOT NULL,
    last_seen_run  VARCHAR NOT NULL,
    gone_in_run    VARCHAR
);

-- One row per version of a record: a new row whenever its content changes (or it first
-- appears, or it is marked gone). "When did this payment become refunded" is a query here.
-- `raw` is the record at that version; for a record's latest version it is NULL and the
-- record is the current table's `raw` (written here when the record changes or goes), so
-- a million-record first load does not store every record twice.
CREATE TABLE IF NOT EXISTS record_versions (
    entity         VARCHAR NOT NULL,         -- the table name: payments, refunds, …
    id             VARCHAR NOT NULL,
    version        INTEGER NOT NULL,         -- 1, 2, … per (entity, id)
    run_id         VARCHAR NOT NULL,         -- the run that saw this version first
    change         VARCHAR NOT NULL,         -- new | changed | gone | returned
    status         VARCHAR,
    amount_minor   BIGINT,
    currency       VARCHAR,
    content_hash   VARCHAR,
    raw            JSON                      -- NULL while this is the latest version
);

-- Every HTTP attempt of every run. Secrets are never stored: no headers, redacted query.
CREATE TABLE IF NOT EXISTS api_calls (
    run_id        VARCHAR NOT NULL,
    call_id       VARCHAR NOT NULL,          -- one logical call (all its attempts share it)
    resource      VARCHAR,
    method        VARCHAR NOT NULL,
    path          VARCHAR NOT NULL,
    query         VARCHAR,
    attempt       INTEGER NOT NULL,
    http_status   INTEGER,                   -- NULL when no HTTP answer (transport failure)
    error         VARCHAR,                   -- envelope `error`, or a transport kind
    message       VARCHAR,
    request_id    VARCHAR,
    latency_ms    DOUBLE,
    outcome       VARCHAR NOT NULL,          -- ok | retry | failed (failed = gave up for good)
    attempted_at  TIMESTAMPTZ NOT NULL,
    waited_ms     DOUBLE DEFAULT 0           -- held back before it went out (limiter, backoff)
);
-- Warehouses from before `waited_ms`.
ALTER TABLE api_calls ADD COLUMN IF NOT EXISTS waited_ms DOUBLE DEFAULT 0;

CREATE OR REPLACE VIEW failed_calls AS
SELECT
    c.run_id, c.call_id, c.resource, c.method, c.path, c.query, c.http_status, c.error,
    c.message, c.request_id, c.attempt AS attempts, c.attempted_at,
    (SELECT list(p.request_id ORDER BY p.attempt) FROM api_calls p
      WHERE p.run_id = c.run_id AND p.call_id = c.call_id
        AND p.resource IS NOT DISTINCT FROM c.resource AND p.request_id IS NOT NULL)
        AS request_ids
FROM api_calls c
WHERE c.outcome = 'failed';

-- Records that could not be loaded, kept whole with the reason and their page's request id.
CREATE TABLE IF NOT EXISTS rejects (
    run_id        VARCHAR NOT NULL,
    resource      VARCHAR NOT NULL,
    page_offset   BIGINT,
    request_id    VARCHAR,
    reason        VARCHAR NOT NULL,
    raw           VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS check_runs (
    run_id         VARCHAR NOT NULL,
    check_name     VARCHAR NOT NULL,
    severity       VARCHAR NOT NULL,
    status         VARCHAR NOT NULL,         -- passed | failed | not_evaluated | errored
    reason         VARCHAR,                  -- why not_evaluated / errored
    description    VARCHAR,
    finding_count  BIGINT NOT NULL DEFAULT 0,
    opening_count  BIGINT NOT NULL DEFAULT 0,
    new_count      BIGINT NOT NULL DEFAULT 0,
    resolved_count BIGINT NOT NULL DEFAULT 0,
    closing_count  BIGINT NOT NULL DEFAULT 0,
    duration_ms    DOUBLE,
    coverage       VARCHAR,                  -- what an evaluated verdict covers, in words
    PRIMARY KEY (run_id, check_name)
);

CREATE TABLE IF NOT EXISTS findings (
    run_id        VARCHAR NOT NULL,
    check_name    VARCHAR NOT NULL,
    severity      VARCHAR NOT NULL,
    finding_key   VARCHAR NOT NULL,          -- check_name || ':' || entity_id || ':' || issue_type
    state         VARCHAR NOT NULL,          -- new | open | resolved
    entity        VARCHAR NOT NULL,
    entity_id     VARCHAR NOT NULL,
    currency      VARCHAR,
    amount_minor  BIGINT,
    issue_type    VARCHAR NOT NULL,
    detail        VARCHAR,
    first_seen_run VARCHAR
);

-- Per run and resource: how many landed records carry each mapped field (recon.fields; the
-- spec does not show these names). A check that needs a field no record has is not evaluated.
CREATE TABLE IF NOT EXISTS field_presence (
    run_id        VARCHAR NOT NULL,
    resource      VARCHAR NOT NULL,
    field         VARCHAR NOT NULL,          -- recon's name: payment_id, amount, created_at, …
    json_path     VARCHAR NOT NULL,          -- where it was read, e.g. $."paymentId"
    records       BIGINT NOT NULL,           -- records of the resource landed in the run
    present       BIGINT NOT NULL,           -- of which carry the field (not JSON null)
    PRIMARY KEY (run_id, resource, field)
);

-- The merchant's books (recon.ledger, docs/ledger.md): the snapshot the latest load read,
-- one row per books row that converted cleanly. Statuses are mapped to the provider's
-- vocabulary (`books_status` keeps the books' own word). Refused rows are in ledger_rejects.
CREATE TABLE IF NOT EXISTS ledger_orders (
    reference      VARCHAR NOT NULL,
    order_id       VARCHAR,
    amount_minor   BIGINT NOT NULL,
    currency       VARCHAR NOT NULL,
    status         VARCHAR NOT NULL,         -- a payment status (status map applied)
    books_status   VARCHAR,                  -- as the books say it
    created_at     TIMESTAMPTZ NOT NULL,
    source         VARCHAR NOT NULL,         -- the file (or query) it was read from
    row_number     BIGINT NOT NULL,          -- spreadsheet row (header = 1); record number otherwise
    run_id         VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS ledger_refunds (
    refund_id      VARCHAR,                  -- the provider's refund id, when the books know it
    payment_id     VARCHAR,
    reference      VARCHAR,                  -- either payment_id or reference
    amount_minor   BIGINT NOT NULL,
    currency       VARCHAR NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL,
    source         VARCHAR NOT NULL,
    row_number     BIGINT NOT NULL,
    run_id         VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS ledger_invoices (
    invoice_id     VARCHAR NOT NULL,
    customer_id    VARCHAR,
    amount_minor   BIGINT NOT NULL,
    currency       VARCHAR NOT NULL,
    status         VARCHAR NOT NULL,         -- an invoice status (status map applied)
    books_status   VARCHAR,
    source         VARCHAR NOT NULL,
    row_number     BIGINT NOT NULL,
    run_id         VARCHAR NOT NULL
);

-- Books rows that were refused, with the reason (nothing is dropped silently).
CREATE TABLE IF NOT EXISTS ledger_rejects (
    run_id         VARCHAR NOT NULL,
    input          VARCHAR NOT NULL,         -- orders | refunds | invoices
    source         VARCHAR NOT NULL,
    row_number     BIGINT NOT NULL,
    reason         VARCHAR NOT NULL,
    raw            JSON NOT NULL             -- the row's mapped fields as read (text)
);

-- What each run read from the books.
CREATE TABLE IF NOT EXISTS ledger_loads (
    run_id         VARCHAR NOT NULL,
    input          VARCHAR NOT NULL,
    source         VARCHAR NOT NULL,         -- files or query (database URL redacted)
    rows_read      BIGINT NOT NULL,
    rows_loaded    BIGINT NOT NULL,
    rejects        BIGINT NOT NULL,
    as_of          TIMESTAMPTZ NOT NULL,     -- the run's start: what "younger than the grace" is measured from
    grace_hours    INTEGER NOT NULL,
    loaded_at      TIMESTAMPTZ NOT NULL
);

-- The matching of the latest load (sql/ledger/matches.sql): one row per books order and per
-- live settled payment that no order names. kind: matched | split | amount_mismatch |
-- currency_mismatch | duplicate_charge | order_missing_at_provider | unexpected_payment |
-- not_payable | awaiting_payment | payment_missing_from_books | awaiting_books;
-- state: matched | pending | break | none.
CREATE TABLE IF NOT EXISTS ledger_matches (
    entity                VARCHAR NOT NULL,  -- order | payment
    entity_id             VARCHAR NOT NULL,  -- the reference, or the payment id
    reference             VARCHAR,
    order_id              VARCHAR,
    books_amount_minor    BIGINT,
    books_currency        VARCHAR,
    books_status          VARCHAR,
    payment_ids           VARCHAR[],         -- the live settled payments with the reference
    payments              INTEGER NOT NULL,  -- live payments with the reference, any status
    settled               INTEGER NOT NULL,
    provider_amount_minor BIGINT,            -- their sum (NULL when one amount is unknown)
    provider_currency     VARCHAR,           -- NULL when they are in several currencies
    provider_status       VARCHAR,           -- confirmed / refunded (all) or partially_refunded
    provider_statuses     VARCHAR,           -- one of their statuses (any, settled or not)
    item_at               TIMESTAMPTZ,       -- the order's (or payment's) created_at
    kind                  VARCHAR NOT NULL,
    state                 VARCHAR NOT NULL,
    run_id                VARCHAR NOT NULL
);

-- Refunds of the latest load: each books refund (side = books) with the payment it resolves
-- to and the provider refund of the same id; each counted provider refund of a payment the
-- books order that the books do not list by id (side = provider).
CREATE TABLE IF NOT EXISTS ledger_refund_matches (
    side                  VARCHAR NOT NULL,  -- books | provider
    refund_key            VARCHAR NOT NULL,  -- refund id, or <source>#<row> for an id-less books row
    refund_id             VARCHAR,
    books_payment_id      VARCHAR,           -- as the books give it
    books_reference       VARCHAR,
    books_amount_minor    BIGINT,
    books_currency        VARCHAR,
    payment_id            VARCHAR,           -- the live payment it resolves to
    resolution            VARCHAR NOT NULL,  -- payment_id | reference | unknown_payment | ambiguous_reference | provider
    payment_currency      VARCHAR,
    provider_payment_id   VARCHAR,
    provider_amount_minor BIGINT,
    provider_currency     VARCHAR,
    provider_status       VARCHAR,
    provider_counted      BOOLEAN,           -- NULL: no live provider refund of that id
    item_at               TIMESTAMPTZ,
    young                 BOOLEAN NOT NULL,  -- younger than the grace
    run_id                VARCHAR NOT NULL
);

-- Per live settled payment the books cover (but a confirmed one with no books refund, which
-- agrees by definition): the books' refund total against its status.
-- expected: confirmed (total 0) | partially_refunded (0 < total < amount) | refunded (total =
-- amount) | over_refunded; state: consistent | pending (consistent without the refunds
-- younger than the grace) | break.
CREATE TABLE IF NOT EXISTS ledger_payment_refunds (
    payment_id            VARCHAR NOT NULL,
    reference             VARCHAR,
    status                VARCHAR NOT NULL,
    amount_minor          BIGINT NOT NULL,
    currency              VARCHAR,
    books_refunds         INTEGER NOT NULL,
    books_total_minor     BIGINT NOT NULL,
    books_settled_minor   BIGINT NOT NULL,   -- without the refunds younger than the grace
    expected              VARCHAR NOT NULL,
    state                 VARCHAR NOT NULL,
    run_id                VARCHAR NOT NULL
);

-- `recon findings ack`: the audit log beside the warehouse (<db stem>.acks.jsonl), loaded
-- at every load and just before publish. A finding is acknowledged while its latest event
-- is an ack taken with the amounts it still has and whose `until` has not passed (view
-- finding_acknowledgements, computed when read).
CREATE TABLE IF NOT EXISTS finding_acks (
    seq            BIGINT NOT NULL,          -- line number in the log
    action         VARCHAR NOT NULL,         -- ack | unack
    finding_key    VARCHAR NOT NULL,
    who            VARCHAR NOT NULL,         -- the OS user
    acted_at       TIMESTAMPTZ NOT NULL,
    note           VARCHAR,
    until          DATE,                     -- the ack lapses after this day
    currency       VARCHAR,                  -- the finding's amounts when acked
    amount_minor   BIGINT,
    sides          VARCHAR                   -- ledger findings: both sides, as their detail says
);

CREATE OR REPLACE VIEW finding_acknowledgements AS
WITH latest AS (
    SELECT * FROM finding_acks QUALIFY row_number() OVER (PARTITION BY finding_key ORDER BY seq DESC) = 1
)
SELECT
    f.run_id, f.finding_key, f.check_name, f.state,
    a.action = 'ack'
        AND a.currency IS NOT DISTINCT FROM f.currency
        AND a.amount_minor IS NOT DISTINCT FROM f.amount_minor
        AND a.sides IS NOT DISTINCT FROM (CASE WHEN starts_with(f.check_name, 'ledger_') THEN f.detail END)
        AND (a.until IS NULL OR a.until >= current_date) AS acknowledged,
    a.action AS last_action, a.who, a.acted_at, a.note, a.until
FROM findings AS f
JOIN latest AS a ON a.finding_key = f.finding_key;
