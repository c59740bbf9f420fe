-- name: open_invoice_inactive_subscription
-- description: An open invoice of a customer who has subscriptions but none of them active.
-- severity: warn
-- requires: [invoices, subscriptions]
-- tolerates: [invoices]
-- tags: [invoices, subscriptions]
WITH inactive AS (
    -- Customers with at least one live subscription and none active.
    SELECT s.customer_id
    FROM subscriptions AS s
    WHERE s.gone_in_run IS NULL AND s.customer_id IS NOT NULL
    GROUP BY s.customer_id
    HAVING count(*) FILTER (WHERE s.status = 'active') = 0
),
flagged AS (
    SELECT i.id, i.customer_id, i.currency, i.amount_due_minor
    FROM invoices AS i
    SEMI JOIN inactive AS c ON c.customer_id = i.customer_id
    WHERE i.gone_in_run IS NULL
      AND i.status = 'open'
),
subs AS (
    -- The statuses are spelled out only for the customers flagged.
    SELECT
        s.customer_id,
        count(*) AS subscription_count,
        string_agg(DISTINCT coalesce(s.status, 'no status'), ', ' ORDER BY coalesce(s.status, 'no status')) AS statuses
    FROM subscriptions AS s
    SEMI JOIN flagged AS f ON f.customer_id = s.customer_id
    WHERE s.gone_in_run IS NULL
    GROUP BY s.customer_id
)
SELECT
    'invoice' AS entity,
    f.id AS entity_id,
    f.currency,
    f.amount_due_minor AS amount_minor,
    'inactive_subscription' AS issue_type,
    'open invoice of ' || recon_money(f.amount_due_minor, f.currency) || ' for customer ' || f.customer_id
        || ', whose ' || s.subscription_count || ' subscription(s) are ' || s.statuses AS detail
FROM flagged AS f
JOIN subs AS s ON s.customer_id = f.customer_id
