-- Migration 0300: the audit trail as a team's work queue (issue 21). Every line of
-- <db stem>.acks.jsonl is copied into finding_acks at load; these columns carry what the
-- new actions say (assign: owner; resolve: reason), every other field of the line (JSON),
-- and the line's place in the hash chain, so `recon findings verify` can compare the trail
-- with the copy the warehouse took.
ALTER TABLE finding_acks ADD COLUMN IF NOT EXISTS owner VARCHAR;
ALTER TABLE finding_acks ADD COLUMN IF NOT EXISTS reason VARCHAR;
ALTER TABLE finding_acks ADD COLUMN IF NOT EXISTS details JSON;
ALTER TABLE finding_acks ADD COLUMN IF NOT EXISTS line_hash VARCHAR;
ALTER TABLE finding_acks ADD COLUMN IF NOT EXISTS prev_hash VARCHAR;

-- The latest work event (ack, unack, assign, resolve) of every finding key, and its owner
-- (the latest assign's). Other audited actions (match, accept_books, close, …) are ignored.
CREATE OR REPLACE VIEW finding_work AS
WITH events AS (
    SELECT * FROM finding_acks WHERE action IN ('ack', 'unack', 'assign', 'resolve')
),
latest AS (
    SELECT * FROM events
    QUALIFY row_number() OVER (PARTITION BY finding_key ORDER BY seq DESC) = 1
),
owners AS (
    SELECT finding_key, nullif(owner, '') AS owner FROM events WHERE action = 'assign'
    QUALIFY row_number() OVER (PARTITION BY finding_key ORDER BY seq DESC) = 1
)
SELECT l.finding_key, l.action, l.who, l.acted_at, l.note, l.until, l.reason,
       l.currency, l.amount_minor, l.sides, o.owner
FROM latest AS l LEFT JOIN owners AS o USING (finding_key);

-- Every finding row with its work state as the trail decides it (recon.findings.work.judge
-- says the same in Python): open, investigating, acknowledged, resolved_manually; NULL for
-- a finding the checks resolved. lapsed_reason says why an acknowledgement or a manual
-- resolution no longer holds.
CREATE OR REPLACE VIEW finding_states AS
WITH j AS (
    SELECT f.run_id, f.finding_key, f.state, w.*,
           w.currency IS NOT DISTINCT FROM f.currency
               AND w.amount_minor IS NOT DISTINCT FROM f.amount_minor
               AND w.sides IS NOT DISTINCT FROM
                   (CASE WHEN starts_with(f.check_name, 'ledger_') THEN f.detail END) AS held,
           CASE w.action WHEN 'ack' THEN 'acknowledged' ELSE 'resolved manually' END AS verb
    FROM findings AS f LEFT JOIN finding_work AS w USING (finding_key)
)
SELECT
    run_id, finding_key,
    CASE
        WHEN state NOT IN ('new', 'open', 'reopened') THEN NULL
        WHEN action IS NULL OR action = 'unack' THEN 'open'
        WHEN action = 'assign' THEN CASE WHEN owner IS NULL THEN 'open' ELSE 'investigating' END
        WHEN NOT held THEN 'open'
        WHEN action = 'ack' AND until < current_date THEN 'open'
        WHEN action = 'ack' THEN 'acknowledged'
        ELSE 'resolved_manually'
    END AS work_state,
    owner,
    CASE WHEN action IS NOT NULL THEN who END AS work_by,
    acted_at AS work_at,
    note AS work_note,
    reason AS work_reason,
    until AS work_until,
    CASE
        WHEN state NOT IN ('new', 'open', 'reopened') OR action IS NULL
             OR action NOT IN ('ack', 'resolve') THEN NULL
        WHEN NOT held THEN 'amount changed since ' || verb || ' by ' || who || ' on '
            || strftime(timezone('UTC', acted_at), '%Y-%m-%d')
        WHEN action = 'ack' AND until < current_date THEN
            'acknowledged until ' || CAST(until AS VARCHAR) || ', which has passed'
    END AS lapsed_reason
FROM j;

CREATE OR REPLACE VIEW finding_acknowledgements AS
WITH latest AS (
    SELECT * FROM finding_acks WHERE action IN ('ack', 'unack', 'assign', 'resolve')
    QUALIFY row_number() OVER (PARTITION BY finding_key ORDER BY seq DESC) = 1
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
