-- name: over_refunded
-- description: A payment (any status) whose counted refunds exceed its amount.
-- severity: error
-- requires: [payments, refunds]
-- tags: [refunds, payments]
WITH counted AS (
    -- Counted refunds (not in a failure status) in the payment's own currency, per live
    -- payment; pending ones are "in flight".
    SELECT
        rp.live_payment_id AS payment_id,
        any_value(rp.payment_status) AS payment_status,
        any_value(rp.payment_currency) AS currency,
        any_value(rp.payment_amount_minor) AS payment_amount_minor,
        CAST(sum(rp.amount_minor) AS BIGINT) AS total,
        CAST(coalesce(sum(rp.amount_minor) FILTER (WHERE lower(rp.status) = 'pending'), 0) AS BIGINT) AS in_flight,
        count(*) AS refund_count
    FROM refund_payments AS rp
    WHERE rp.live_payment_id IS NOT NULL
      AND rp.currency IS NOT DISTINCT FROM rp.payment_currency
      AND NOT list_contains($failed_statuses, lower(coalesce(rp.status, '')))
    GROUP BY rp.live_payment_id
)
SELECT
    'payment' AS entity,
    c.payment_id AS entity_id,
    c.currency,
    c.total - c.payment_amount_minor AS amount_minor,
    'over_refunded' AS issue_type,
    'refunded ' || recon_money(c.total, c.currency)
        || ' of ' || recon_money(c.payment_amount_minor, c.currency)
        || ' (status ' || coalesce(c.payment_status, 'missing')
        || '; in flight: ' || recon_money(c.in_flight, c.currency)
        || '; ' || c.refund_count || ' counted refunds)' AS detail
FROM counted AS c
WHERE c.total > c.payment_amount_minor
