-- The findings lifecycle of one run, in statements separated by `-- statement` lines.
-- Inputs (temp tables filled by recon.checks.runner):
--   _recon_status(check_name, severity, status, reason, description, finding_count,
--                 duration_ms, coverage, partial, read_partial, per_resource, key_has_issue)
--   _recon_results(check_name, entity, entity_id, currency, amount_minor, issue_type, detail)
-- Parameters: $run_id, $as_of.
--
-- A finding's key is `check:entity_id:issue_type`, or `check:entity_id` for a check whose
-- header says `finding_key: [entity_id]` (open_invoices: a bucket change is the same
-- finding). Keys of the opening set are derived again from its entity_id and issue_type, so
-- findings stored under an earlier key rule carry over instead of resolving and reopening.
--
-- Opening set of a check = its `new`/`open` findings in the latest earlier run that has a
-- check_runs row for it. Tonight, per check:
--   evaluated (passed/failed): found keys are `new` (not in the opening set) or `open`
--     (carrying first_seen_run); opening keys not found are `resolved` only where tonight's
--     verdict covered them: every resource the check reads was covered whole (`partial` is
--     empty), or — for a check whose findings are about one record each (per_resource) —
--     the finding's resource was covered whole or its record was read tonight. Otherwise
--     they stay `open`: a page that could not be read never makes a problem look fixed;
--   not_evaluated / errored: the opening set is carried forward unchanged as `open`; nothing
--     is resolved.
-- A found key that is not in the opening set but was reported in an earlier night (it was
-- resolved since) is `reopened`, not new: it keeps the first_seen_run of its first night and
-- counts the times it came back (reopen_count). It counts among the night's new findings.
-- Every finding carries item_at, the business date of the item it is about (the payment's,
-- refund's, dispute's, invoice's, intent's or books order's own date).
-- So, per check: opening + new (reopened included) - resolved = closing (= new + reopened + open).
-- statement
CREATE OR REPLACE TEMP TABLE _recon_opening AS
WITH this_run AS (
    SELECT coalesce((SELECT started_at FROM runs WHERE run_id = $run_id), $as_of) AS started_at
),
previous AS (
    SELECT cr.check_name, arg_max(cr.run_id, r.started_at) AS run_id
    FROM check_runs AS cr
    JOIN runs AS r ON r.run_id = cr.run_id
    WHERE cr.run_id <> $run_id
      AND r.started_at < (SELECT started_at FROM this_run)
      AND cr.check_name IN (SELECT check_name FROM _recon_status)
    GROUP BY cr.check_name
)
SELECT f.* REPLACE (
    f.check_name || ':' || f.entity_id
        || CASE WHEN s.key_has_issue THEN ':' || f.issue_type ELSE '' END AS finding_key
)
FROM findings AS f
JOIN previous AS p ON p.run_id = f.run_id AND p.check_name = f.check_name
JOIN _recon_status AS s ON s.check_name = f.check_name
WHERE f.state IN ('new', 'open', 'reopened')
QUALIFY row_number() OVER (
    PARTITION BY f.check_name,
        f.entity_id || CASE WHEN s.key_has_issue THEN ':' || f.issue_type ELSE '' END
    ORDER BY f.first_seen_run, f.issue_type
) = 1
-- statement
-- Of the opening findings of per-record checks evaluated over partly read resources: those
-- whose record was read tonight (so tonight's verdict covered it).
CREATE OR REPLACE TEMP TABLE _recon_read AS
WITH wanted AS (
    SELECT DISTINCT
        CASE WHEN o.entity = 'resource' THEN o.entity_id ELSE o.entity || 's' END AS resource,
        o.entity_id AS id
    FROM _recon_opening AS o
    JOIN _recon_status AS s ON s.check_name = o.check_name
    WHERE s.per_resource AND len(s.read_partial) > 0
)
SELECT w.* FROM wanted AS w SEMI JOIN live_records AS t
    ON t.resource = w.resource AND t.id = w.id AND t.last_seen_run = $run_id
-- statement
DELETE FROM findings
WHERE run_id = $run_id AND check_name IN (SELECT check_name FROM _recon_status)
-- statement
DELETE FROM check_runs
WHERE run_id = $run_id AND check_name IN (SELECT check_name FROM _recon_status)
-- statement
-- What the INSERT below reads is made first,
-- a temp table at a time: at a million findings (a million books orders, each a break) the
-- INSERT as one statement, its CTEs read several times and so held whole, did not fit the
-- night's 192 MiB (issue 38).
-- The business date of each item a finding is about tonight.
CREATE OR REPLACE TEMP TABLE _recon_wanted AS
SELECT DISTINCT r.entity, r.entity_id
FROM _recon_results AS r
JOIN _recon_status AS s ON s.check_name = r.check_name
WHERE s.status IN ('passed', 'failed')
-- statement
CREATE OR REPLACE TEMP TABLE _recon_dated AS
WITH items AS (
    -- every resource's records, through the catalogue's view (gone ones included)
    SELECT r.entity, r.id AS entity_id, r.created_at FROM live_records AS r
    SEMI JOIN _recon_wanted AS w ON w.entity = r.entity AND w.entity_id = r.id
    UNION ALL SELECT 'refund', refund_key, item_at FROM ledger_refund_matches
    WHERE refund_key IN (SELECT entity_id FROM _recon_wanted WHERE entity = 'refund')
    UNION ALL SELECT 'order', coalesce(reference, order_id), created_at FROM ledger_orders
    WHERE coalesce(reference, order_id) IN (SELECT entity_id FROM _recon_wanted WHERE entity = 'order')
    -- the bank leg (docs/bank.md): a settlement's business day, a line's value date, a gap's
    -- first missing day
    UNION ALL SELECT 'settlement', settlement_id, CAST(business_day AS TIMESTAMPTZ) FROM bank_settlements
    WHERE settlement_id IN (SELECT entity_id FROM _recon_wanted WHERE entity = 'settlement')
    UNION ALL SELECT 'bank_line', file_name || ':' || line_no, CAST(value_date AS TIMESTAMPTZ) FROM bank_lines
    WHERE file_name || ':' || line_no IN (SELECT entity_id FROM _recon_wanted WHERE entity = 'bank_line')
    UNION ALL SELECT 'statement', currency || ':' || strftime(first_missing, '%Y-%m-%d'),
           CAST(first_missing AS TIMESTAMPTZ) FROM bank_gaps
    WHERE currency || ':' || strftime(first_missing, '%Y-%m-%d')
          IN (SELECT entity_id FROM _recon_wanted WHERE entity = 'statement')
)
SELECT entity, entity_id, min(created_at) AS item_at FROM items GROUP BY entity, entity_id
-- statement
-- The findings tonight's verdicts found, keyed, with their item's date.
CREATE OR REPLACE TEMP TABLE _recon_tonight AS
SELECT r.*,
    r.check_name || ':' || r.entity_id
        || CASE WHEN s.key_has_issue THEN ':' || r.issue_type ELSE '' END AS finding_key,
    d.item_at
FROM _recon_results AS r
JOIN _recon_status AS s ON s.check_name = r.check_name
LEFT JOIN _recon_dated AS d ON d.entity = r.entity AND d.entity_id = r.entity_id
WHERE s.status IN ('passed', 'failed')
-- statement
-- Earlier nights of the keys found tonight that are not open: they come back.
CREATE OR REPLACE TEMP TABLE _recon_history AS
SELECT f.finding_key,
       arg_min(f.first_seen_run, r.started_at) AS first_seen_run,
       max(coalesce(f.reopen_count, 0)) AS reopen_count
FROM findings AS f
JOIN runs AS r ON r.run_id = f.run_id
WHERE f.run_id <> $run_id
  AND f.finding_key IN (SELECT finding_key FROM _recon_tonight)
  AND f.finding_key NOT IN (SELECT finding_key FROM _recon_opening)
GROUP BY f.finding_key
-- statement
INSERT INTO findings BY NAME
WITH opening AS (
    SELECT o.*,
        CASE WHEN o.entity = 'resource' THEN o.entity_id ELSE o.entity || 's' END AS resource
    FROM _recon_opening AS o
)
SELECT
    $run_id AS run_id, t.check_name, s.severity, t.finding_key,
    CASE WHEN o.finding_key IS NOT NULL THEN 'open'
         WHEN h.finding_key IS NOT NULL THEN 'reopened'
         ELSE 'new' END AS state,
    t.entity, t.entity_id, t.currency, t.amount_minor, t.issue_type, t.detail,
    coalesce(o.first_seen_run, h.first_seen_run, $run_id) AS first_seen_run,
    CASE WHEN o.finding_key IS NOT NULL THEN coalesce(o.reopen_count, 0)
         WHEN h.finding_key IS NOT NULL THEN h.reopen_count + 1
         ELSE 0 END AS reopen_count,
    coalesce(t.item_at, o.item_at) AS item_at
FROM _recon_tonight AS t
JOIN _recon_status AS s ON s.check_name = t.check_name
LEFT JOIN _recon_opening AS o ON o.check_name = t.check_name AND o.finding_key = t.finding_key
LEFT JOIN _recon_history AS h ON o.finding_key IS NULL AND h.finding_key = t.finding_key
UNION ALL
SELECT
    $run_id AS run_id, o.check_name, s.severity, o.finding_key,
    CASE WHEN s.status IN ('passed', 'failed')
          AND (len(s.partial) = 0
               OR (s.per_resource
                   AND (NOT list_contains(s.partial, o.resource)
                        OR (list_contains(s.read_partial, o.resource)
                            AND EXISTS (SELECT 1 FROM _recon_read AS rr
                                        WHERE rr.resource = o.resource AND rr.id = o.entity_id)))))
         THEN 'resolved' ELSE 'open' END AS state,
    o.entity, o.entity_id, o.currency, o.amount_minor, o.issue_type, o.detail, o.first_seen_run,
    coalesce(o.reopen_count, 0) AS reopen_count, o.item_at
FROM opening AS o
JOIN _recon_status AS s ON s.check_name = o.check_name
ANTI JOIN _recon_tonight AS t ON t.check_name = o.check_name AND t.finding_key = o.finding_key
-- statement
INSERT INTO check_runs (
    run_id, check_name, severity, status, reason, description, finding_count,
    opening_count, new_count, resolved_count, closing_count, duration_ms, coverage
)
WITH opening AS (
    SELECT check_name, count(*) AS n FROM _recon_opening GROUP BY check_name
),
states AS (
    SELECT
        check_name,
        count(*) FILTER (WHERE state IN ('new', 'reopened')) AS new_count,
        count(*) FILTER (WHERE state = 'resolved') AS resolved_count,
        count(*) FILTER (WHERE state IN ('new', 'open', 'reopened')) AS closing_count
    FROM findings
    WHERE run_id = $run_id AND check_name IN (SELECT check_name FROM _recon_status)
    GROUP BY check_name
)
SELECT
    $run_id, s.check_name, s.severity, s.status, s.reason, s.description, s.finding_count,
    coalesce(o.n, 0), coalesce(st.new_count, 0), coalesce(st.resolved_count, 0),
    coalesce(st.closing_count, 0), s.duration_ms, s.coverage
FROM _recon_status AS s
LEFT JOIN opening AS o ON o.check_name = s.check_name
LEFT JOIN states AS st ON st.check_name = s.check_name
