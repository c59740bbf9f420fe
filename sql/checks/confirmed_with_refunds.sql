-- name: confirmed_with_refunds
-- description: A payment still marked confirmed that has counted refunds.
-- severity: error
-- requires: [payments, refunds]
-- tags: [refunds, payments]
WITH counted AS (
    -- Counted refunds per live payment: sql/reference/refund_totals.sql.
    SELECT * FROM counted_refunds($failed_statuses)
    WHERE payment_status = 'confirmed'
)
SELECT
    'payment' AS entity,
    c.payment_id AS entity_id,
    c.currency,
    c.total AS amount_minor,
    'confirmed_with_refunds' AS issue_type,
    'confirmed, but refunded ' || recon_money(c.total, c.currency)
        || ' of ' || recon_money(c.payment_amount_minor, c.currency)
        || ' (in flight: ' || recon_money(c.in_flight, c.currency)
        || '; ' || c.refund_count || ' counted refunds)' AS detail
FROM counted AS c
WHERE c.total > 0
