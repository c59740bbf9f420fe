-- name: open_invoice_inactive_subscription
-- description: An open invoice of a customer who has subscriptions but none of them active.
-- severity: warn
-- requires: [invoices, subscriptions]
-- tags: [invoices, subscriptions]
WITH subs AS (
    SELECT
        s.customer_id,
        count(*) AS subscription_count,
        count(*) FILTER (WHERE s.status = 'active') AS active_count,
        string_agg(DISTINCT coalesce(s.status, 'no status'), ', ' ORDER BY coalesce(s.status, 'no status')) AS statuses
    FROM subscriptions AS s
    WHERE s.gone_in_run IS NULL AND s.customer_id IS NOT NULL
    GROUP BY s.customer_id
)
SELECT
    'invoice' AS entity,
    i.id AS entity_id,
    i.currency,
    i.amount_due_minor AS amount_minor,
    'inactive_subscription' AS issue_type,
    'open invoice of ' || recon_money(i.amount_due_minor, i.currency) || ' for customer ' || i.customer_id
        || ', whose ' || s.subscription_count || ' subscription(s) are ' || s.statuses AS detail
FROM invoices AS i
JOIN subs AS s ON s.customer_id = i.customer_id
WHERE i.gone_in_run IS NULL
  AND i.status = 'open'
  AND s.active_count = 0
