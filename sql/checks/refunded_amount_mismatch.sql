-- name: refunded_amount_mismatch
-- description: A payment marked refunded whose counted refunds do not add up to its amount.
-- severity: error
-- requires: [payments, refunds]
-- tags: [refunds, payments]
WITH counted AS (
    -- Counted refunds: live, not in a failure status; pending ones are "in flight".
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
    abs(p.amount_minor - coalesce(c.total, 0)) AS amount_minor,
    CASE WHEN coalesce(c.total, 0) < p.amount_minor THEN 'refunded_short' ELSE 'refunded_over' END AS issue_type,
    'refunded ' || recon_money(coalesce(c.total, 0), p.currency)
        || ' of ' || recon_money(p.amount_minor, p.currency)
        || ' (in flight: ' || recon_money(coalesce(c.in_flight, 0), p.currency)
        || '; ' || coalesce(c.refund_count, 0) || ' counted refunds)' AS detail
FROM payments AS p
LEFT JOIN counted AS c ON c.payment_id = p.id AND c.currency IS NOT DISTINCT FROM p.currency
WHERE p.gone_in_run IS NULL
  AND p.status = 'refunded'
  AND p.amount_minor IS NOT NULL
  AND coalesce(c.total, 0) <> p.amount_minor
