-- name: refunded_amount_mismatch
-- description: A payment marked refunded whose counted refunds do not add up to its amount.
-- severity: error
-- requires: [payments, refunds]
-- tags: [refunds, payments]
WITH counted AS (
    -- Counted refunds (not in a failure status) in the payment's own currency, per live
    -- payment; pending ones are "in flight".
    SELECT
        rp.live_payment_id AS payment_id,
        CAST(sum(rp.amount_minor) AS BIGINT) AS total,
        CAST(coalesce(sum(rp.amount_minor) FILTER (WHERE lower(rp.status) = 'pending'), 0) AS BIGINT) AS in_flight,
        count(*) AS refund_count
    FROM refund_payments AS rp
    WHERE rp.live_payment_id IS NOT NULL
      AND rp.payment_status = 'refunded'
      AND rp.currency IS NOT DISTINCT FROM rp.payment_currency
      AND NOT list_contains($failed_statuses, lower(coalesce(rp.status, '')))
    GROUP BY rp.live_payment_id
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
LEFT JOIN counted AS c ON c.payment_id = p.id
WHERE p.gone_in_run IS NULL
  AND p.status = 'refunded'
  AND p.amount_minor IS NOT NULL
  AND coalesce(c.total, 0) <> p.amount_minor
