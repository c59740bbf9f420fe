-- name: partially_refunded_out_of_range
-- description: A payment marked partially_refunded whose counted refunds are not strictly between zero and its amount.
-- severity: error
-- requires: [payments, refunds]
-- tolerates: [payments]
-- tags: [refunds, payments]
WITH counted AS (
    -- Counted refunds per live payment: sql/reference/refund_totals.sql.
    SELECT * FROM counted_refunds($failed_statuses, $as_of, $refund_grace_hours)
    WHERE payment_status = 'partially_refunded'
),
judged AS (
    SELECT p.id, p.currency, p.amount_minor, coalesce(c.total, 0) AS total,
           coalesce(c.settled, 0) AS settled, coalesce(c.in_flight, 0) AS in_flight,
           coalesce(c.refund_count, 0) AS refund_count, c.assumed, c.assumed_count
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
        || '; ' || j.refund_count || ' counted refunds'
        || recon_assumed(j.assumed, j.assumed_count, j.currency) || ')' AS detail
FROM judged AS j
-- Wrong whether or not the young pending refunds settle (in flight: refund_in_flight).
WHERE NOT (j.total > 0 AND j.total < j.amount_minor)
  AND NOT (j.settled > 0 AND j.settled < j.amount_minor)
