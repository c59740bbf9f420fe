-- Counted refunds per live payment (docs/design.md): refunds not in a failure status, in the
-- payment's own currency; `pending` ones are "in flight". The one definition of "counted"
-- that the refund checks share, called with the checks' bound parameters:
--   counted_refunds($failed_statuses, $as_of, $refund_grace_hours)
-- Columns: total (every counted refund), in_flight (the pending ones), young (pending ones
-- younger than the grace: just created, the payment's status may not show them yet),
-- settled (total - young), assumed (counted refunds whose status recon does not know, or
-- none: counted because they are not a failure, and said so in the details).
-- A payment is judged wrong only when its status fits neither `total` nor `settled`: a
-- young pending refund postpones the verdict (check refund_in_flight shows it meanwhile).
-- Grouped by the payment's status too (it depends on the payment id) so that a check's
-- filter on it is applied before the sums.
CREATE OR REPLACE MACRO counted_refunds(failed_statuses, as_of, grace_hours) AS TABLE
WITH known AS (
    SELECT list(v.status) AS statuses FROM status_values AS v WHERE v.entity = 'refunds'
),
counted AS (
    SELECT
        rp.*,
        -- NULL (not young) when the refund has no createdAt: it has no age.
        lower(rp.status) = 'pending'
            AND rp.created_at > as_of - to_hours(CAST(grace_hours AS BIGINT)) AS young,
        NOT coalesce(list_contains((SELECT k.statuses FROM known AS k), lower(rp.status)), false)
            AS unknown_status
    FROM refund_payments AS rp
    WHERE rp.live_payment_id IS NOT NULL
      AND rp.currency IS NOT DISTINCT FROM rp.payment_currency
      AND NOT list_contains(failed_statuses, lower(coalesce(rp.status, '')))
),
totals AS (
    SELECT
        c.live_payment_id AS payment_id,
        c.payment_status,
        c.payment_currency AS currency,
        c.payment_amount_minor,
        CAST(sum(c.amount_minor) AS BIGINT) AS total,
        CAST(coalesce(sum(c.amount_minor) FILTER (WHERE lower(c.status) = 'pending'), 0) AS BIGINT) AS in_flight,
        CAST(coalesce(sum(c.amount_minor) FILTER (WHERE c.young), 0) AS BIGINT) AS young,
        count(*) AS refund_count,
        count(*) FILTER (WHERE c.young) AS young_count,
        CAST(coalesce(sum(c.amount_minor) FILTER (WHERE c.unknown_status), 0) AS BIGINT) AS assumed,
        count(*) FILTER (WHERE c.unknown_status) AS assumed_count
    FROM counted AS c
    GROUP BY c.live_payment_id, c.payment_status, c.payment_currency, c.payment_amount_minor
)
SELECT t.*, t.total - t.young AS settled FROM totals AS t;

-- What a refund total assumed, for a finding's detail: '' or
-- '; assumed counted: EUR 4.00 in 2 refunds of unknown or no status'.
CREATE OR REPLACE MACRO recon_assumed(assumed, assumed_count, currency) AS
    CASE WHEN coalesce(assumed_count, 0) = 0 THEN ''
         ELSE '; assumed counted: ' || recon_money(assumed, currency) || ' in ' || assumed_count
              || CASE WHEN assumed_count = 1 THEN ' refund' ELSE ' refunds' END
              || ' of unknown or no status' END;
