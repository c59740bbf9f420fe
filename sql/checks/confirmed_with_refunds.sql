-- name: confirmed_with_refunds
-- description: A payment still marked confirmed that has counted refunds.
-- severity: error
-- requires: [payments, refunds]
-- tags: [refunds, payments]
WITH counted AS (
    SELECT
        r.payment_id,
        r.currency,
        CAST(sum(r.amount_minor) AS BIGINT) AS total,
        CAST(coalesce(sum(r.amount_minor) FILTER (WHERE lower(r.status) = 'pending'), 0) AS BIGINT) AS in_flight,
        count(*) AS refund_count
    FROM refunds AS r
    WHERE r.gone_in_run IS NULL
      AND NOT list_contains($failed_statuses, lower(coalesce(r.status, '')))
    GROUP BY r.payment_id, r.currency
)
SELECT
    'payment' AS entity,
    p.id AS entity_id,
    p.currency,
    c.total AS amount_minor,
    'confirmed_with_refunds' AS issue_type,
    'confirmed, but refunded ' || recon_money(c.total, p.currency)
        || ' of ' || recon_money(p.amount_minor, p.currency)
        || ' (in flight: ' || recon_money(c.in_flight, p.currency)
        || '; ' || c.refund_count || ' counted refunds)' AS detail
FROM payments AS p
JOIN counted AS c ON c.payment_id = p.id AND c.currency IS NOT DISTINCT FROM p.currency
WHERE p.gone_in_run IS NULL
  AND p.status = 'confirmed'
  AND c.total > 0
