-- name: suspicious_changes
-- description: A record whose new version this run changed status in a way that should not happen (see status_transitions) or changed its amount.
-- severity: warn
-- requires: []
-- per_resource: every resource
-- tolerates: every resource
-- tags: [history, status]
-- evaluable_when: SELECT count(*) > 0 FROM resource_scans AS s JOIN runs AS r ON r.run_id = s.run_id WHERE s.run_id <> $run_id AND r.started_at < $as_of AND s.records > 0
-- not_evaluated_reason: "first run: no earlier records to compare with"
WITH touched AS (
    SELECT DISTINCT entity, id
    FROM record_versions
    WHERE run_id = $run_id AND change IN ('changed', 'returned')
),
ordered AS (
    -- Each version next to the previous one that was not a `gone` marker.
    SELECT
        -- Lower/upper case: versions stored before codes were normalised on load compare
        -- equal to the normalised ones ('Refunded' then, 'refunded' now is no change).
        v.entity, v.id, v.version, v.run_id, lower(v.status) AS status, v.amount_minor,
        upper(v.currency) AS currency,
        lag(lower(v.status)) OVER w AS prev_status,
        lag(v.amount_minor) OVER w AS prev_amount_minor,
        lag(upper(v.currency)) OVER w AS prev_currency,
        lag(v.run_id) OVER w AS prev_run_id
    FROM record_versions AS v
    SEMI JOIN touched AS t ON t.entity = v.entity AND t.id = v.id
    WHERE v.change <> 'gone'
    WINDOW w AS (PARTITION BY v.entity, v.id ORDER BY v.version)
),
tonight AS (
    SELECT
        o.*,
        -- payments -> payment, payment_intents -> payment_intent, …
        regexp_replace(o.entity, 's$', '') AS singular
    FROM ordered AS o
    WHERE o.run_id = $run_id AND o.prev_run_id IS NOT NULL
)
SELECT
    t.singular AS entity, t.id AS entity_id, t.currency, t.amount_minor,
    'illegal_transition' AS issue_type,
    t.singular || ' status changed ' || coalesce(t.prev_status, '(none)') || ' → ' || coalesce(t.status, '(none)')
        || ' since run ' || t.prev_run_id AS detail
FROM tonight AS t
WHERE t.status IS DISTINCT FROM t.prev_status
  AND NOT EXISTS (
      SELECT 1 FROM status_transitions AS st
      WHERE st.entity = t.entity AND st.from_status = t.prev_status AND st.to_status = t.status
  )
UNION ALL
SELECT
    t.singular, t.id, t.currency, t.amount_minor,
    'amount_changed',
    t.singular || ' amount changed from ' || recon_money(t.prev_amount_minor, t.prev_currency)
        || ' to ' || recon_money(t.amount_minor, t.currency) || ' since run ' || t.prev_run_id
FROM tonight AS t
WHERE t.amount_minor IS DISTINCT FROM t.prev_amount_minor
