-- name: partially_refunded_out_of_range
-- description: A payment marked partially_refunded whose counted refunds are not strictly between zero and its amount.
-- severity: error
-- requires: [payments, refunds]
-- tags: [refunds, payments]
WITH counted AS (
    -- Counted refunds per live payment: sql/reference/refund_totals.sql.
    SELECT * FROM counted_refunds($failed_statuses)
    WHERE payment_status = 'partially_refunded'
),
judged AS (
    SELECT p.id, p.currency, p.amount_minor, coalesce(c.total, 0) AS total,
           coalesce(c.in_flight, 0) AS in_flight, coalesce(c.refund_count, 0) AS refund_count
    FROM payments AS p
    LEFT JOIN counted AS c ON c.payment_id = p.id
    WHERE p.gone_in_run IS NULL
      AND p.status = 'partially_refunded'
      AND p.amount_minor IS NOT NULL
)
SELECT
    'payment' AS entity,
    j.id AS entity_id,
    j.currency,
    CASE WHEN j.total <= 0 THEN j.amount_minor ELSE abs(j.amount_minor - j.total) END AS amount_minor,
    CASE WHEN j.total <= 0 THEN 'partial_without_refund'
         WHEN j.total = j.amount_minor THEN 'partial_but_full'
         ELSE 'partial_over' END AS issue_type,
    'partially refunded, but counted refunds are ' || recon_money(j.total, j.currency)
        || ' of ' || recon_money(j.amount_minor, j.currency)
        || ' (in flight: ' || recon_money(j.in_flight, j.currency)
        || '; ' || j.refund_count || ' counted refunds)' AS detail
FROM judged AS j
WHERE NOT (j.total > 0 AND j.total < j.amount_minor)
