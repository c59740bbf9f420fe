-- Counted refunds per live payment (DESIGN §1): refunds not in a failure status, in the
-- payment's own currency; `pending` ones are "in flight". The one definition of "counted"
-- that the refund checks share. `failed_statuses` is the checks' bound `$failed_statuses`.
-- Grouped by the payment's status too (it depends on the payment id) so that a check's
-- filter on it is applied before the sums.
CREATE OR REPLACE MACRO counted_refunds(failed_statuses) AS TABLE
SELECT
    rp.live_payment_id AS payment_id,
    rp.payment_status,
    rp.payment_currency AS currency,
    rp.payment_amount_minor,
    CAST(sum(rp.amount_minor) AS BIGINT) AS total,
    CAST(coalesce(sum(rp.amount_minor) FILTER (WHERE lower(rp.status) = 'pending'), 0) AS BIGINT) AS in_flight,
    count(*) AS refund_count
FROM refund_payments AS rp
WHERE rp.live_payment_id IS NOT NULL
  AND rp.currency IS NOT DISTINCT FROM rp.payment_currency
  AND NOT list_contains(failed_statuses, lower(coalesce(rp.status, '')))
GROUP BY rp.live_payment_id, rp.payment_status, rp.payment_currency, rp.payment_amount_minor;
