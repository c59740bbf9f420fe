-- name: vanished_records
-- description: A record that a complete scan in this run no longer lists (it vanished from the provider).
-- severity: warn
-- requires: []
-- per_resource: [payments, refunds, disputes, subscriptions, invoices, payment_intents, payment_methods]
-- tags: [history]
-- evaluable_when: SELECT count(*) > 0 FROM resource_scans AS s JOIN runs AS r ON r.run_id = s.run_id WHERE s.run_id <> $run_id AND r.started_at < $as_of AND s.records > 0
-- not_evaluated_reason: "first run: no earlier records to compare with"
WITH gone AS (
    SELECT 'payment' AS entity, id, currency, amount_minor, status, last_seen_run FROM payments WHERE gone_in_run = $run_id
    UNION ALL SELECT 'refund', id, currency, amount_minor, status, last_seen_run FROM refunds WHERE gone_in_run = $run_id
    UNION ALL SELECT 'dispute', id, currency, amount_minor, status, last_seen_run FROM disputes WHERE gone_in_run = $run_id
    UNION ALL SELECT 'invoice', id, currency, amount_due_minor, status, last_seen_run FROM invoices WHERE gone_in_run = $run_id
    UNION ALL SELECT 'payment_intent', id, currency, amount_minor, status, last_seen_run FROM payment_intents WHERE gone_in_run = $run_id
    UNION ALL SELECT 'subscription', id, CAST(NULL AS VARCHAR), CAST(NULL AS BIGINT), status, last_seen_run FROM subscriptions WHERE gone_in_run = $run_id
    UNION ALL SELECT 'payment_method', id, CAST(NULL AS VARCHAR), CAST(NULL AS BIGINT), type, last_seen_run FROM payment_methods WHERE gone_in_run = $run_id
)
SELECT
    g.entity,
    g.id AS entity_id,
    g.currency,
    g.amount_minor,
    'vanished' AS issue_type,
    g.entity || ' (' || coalesce(g.status, 'no status')
        || CASE WHEN g.amount_minor IS NOT NULL THEN ', ' || recon_money(g.amount_minor, g.currency) ELSE '' END
        || ') last listed in run ' || g.last_seen_run || ', missing from this run''s complete scan' AS detail
FROM gone AS g
