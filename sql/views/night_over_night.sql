-- night_over_night: what changed between the previous complete run and the latest run.
-- kind = 'finding': a finding open now and not then (change 'new'), open then and not now
--   ('resolved'), or open both times with another amount ('amount changed');
-- kind = 'record': every record version written after the previous complete run, up to the
--   latest (change: new | changed | gone | returned, from record_versions).
-- With no earlier complete run, everything of the latest run is new.
CREATE OR REPLACE VIEW night_over_night AS
WITH latest AS (
    SELECT run_id, started_at FROM runs ORDER BY started_at DESC, run_id DESC LIMIT 1
),
previous AS (
    SELECT r.run_id, r.started_at
    FROM runs AS r, latest AS l
    WHERE r.status = 'complete' AND r.started_at < l.started_at
    ORDER BY r.started_at DESC, r.run_id DESC LIMIT 1
),
now_open AS (
    SELECT f.* FROM findings AS f JOIN latest AS l USING (run_id) WHERE f.state IN ('new', 'open', 'reopened')
),
then_open AS (
    SELECT f.* FROM findings AS f JOIN previous AS p USING (run_id) WHERE f.state IN ('new', 'open', 'reopened')
),
finding_changes AS (
    SELECT
        'finding' AS kind,
        coalesce(n.check_name, o.check_name) AS name,
        coalesce(n.severity, o.severity) AS severity,
        CASE WHEN o.finding_key IS NULL THEN 'new'
             WHEN n.finding_key IS NULL THEN 'resolved'
             ELSE 'amount changed' END AS change,
        coalesce(n.entity, o.entity) AS entity,
        coalesce(n.entity_id, o.entity_id) AS entity_id,
        coalesce(n.currency, o.currency) AS currency,
        o.amount_minor AS amount_minor_before,
        n.amount_minor AS amount_minor_after,
        coalesce(n.detail, o.detail) AS detail
    FROM now_open AS n
    FULL OUTER JOIN then_open AS o USING (finding_key)
    WHERE o.finding_key IS NULL OR n.finding_key IS NULL
       OR n.amount_minor IS DISTINCT FROM o.amount_minor
       OR n.currency IS DISTINCT FROM o.currency
),
record_changes AS (
    SELECT
        'record' AS kind, v.entity AS name, CAST(NULL AS VARCHAR) AS severity, v.change,
        v.entity, v.id AS entity_id, v.currency,
        (SELECT p.amount_minor FROM record_versions AS p
          WHERE p.entity = v.entity AND p.id = v.id AND p.version = v.version - 1) AS amount_minor_before,
        v.amount_minor AS amount_minor_after,
        'status ' || coalesce(v.status, '?') AS detail
    FROM record_versions AS v
    JOIN runs AS r ON r.run_id = v.run_id
    CROSS JOIN latest AS l
    WHERE r.started_at <= l.started_at
      AND r.started_at > coalesce((SELECT started_at FROM previous), TIMESTAMPTZ '-infinity')
)
SELECT
    c.*,
    money(c.amount_minor_before, c.currency) AS amount_before,
    money(c.amount_minor_after, c.currency) AS amount_after,
    (SELECT run_id FROM previous) AS since_run,
    (SELECT run_id FROM latest) AS run_id
FROM (SELECT * FROM finding_changes UNION ALL SELECT * FROM record_changes) AS c;
