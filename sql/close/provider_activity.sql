-- Provider activity per currency for the period, from the records as they stood at its end:
-- each payment, refund and dispute in the version the last run started before $period_end
-- saw (record_versions: the highest version first seen by such a run; a record gone by then
-- is left out), counted when it was created inside the period (created_at, UTC).
--   settled   payments confirmed, partially_refunded or refunded (the money came in)
--   refunded  refunds whose status is not a failure ($failed_statuses, as the checks count)
--   disputed  disputes, any status
--   net       settled - refunded - disputed
WITH cut AS (
    SELECT run_id FROM runs WHERE loaded_at IS NOT NULL AND started_at < $period_end
),
as_of AS (
    SELECT v.entity, v.id, v.status, v.amount_minor, v.currency, v.change
    FROM record_versions AS v JOIN cut USING (run_id)
    WHERE v.entity IN ('payments', 'refunds', 'disputes')
    QUALIFY row_number() OVER (PARTITION BY v.entity, v.id ORDER BY v.version DESC) = 1
),
dated AS (
    -- live_records: every record of every resource (the catalogue's), its created_at included
    SELECT a.*, l.created_at
    FROM as_of AS a
    LEFT JOIN live_records AS l ON l.resource = a.entity AND l.id = a.id
    WHERE a.change <> 'gone'
),
inside AS (
    SELECT *,
           entity = 'payments' AND status IN ('confirmed', 'partially_refunded', 'refunded') AS is_settled,
           entity = 'refunds' AND NOT list_contains($failed_statuses, status) AS is_refund,
           entity = 'disputes' AS is_dispute
    FROM dated
    WHERE created_at >= $period_start AND created_at < $period_end
)
SELECT
    currency,
    CAST(count(*) FILTER (WHERE entity = 'payments') AS BIGINT) AS payments,
    CAST(count(*) FILTER (WHERE is_settled) AS BIGINT) AS payments_settled,
    CAST(coalesce(sum(amount_minor) FILTER (WHERE is_settled), 0) AS BIGINT) AS settled_minor,
    CAST(count(*) FILTER (WHERE is_refund) AS BIGINT) AS refunds,
    CAST(coalesce(sum(amount_minor) FILTER (WHERE is_refund), 0) AS BIGINT) AS refunded_minor,
    CAST(count(*) FILTER (WHERE is_dispute) AS BIGINT) AS disputes,
    CAST(coalesce(sum(amount_minor) FILTER (WHERE is_dispute), 0) AS BIGINT) AS disputed_minor,
    CAST(coalesce(sum(amount_minor) FILTER (WHERE is_settled), 0)
         - coalesce(sum(amount_minor) FILTER (WHERE is_refund), 0)
         - coalesce(sum(amount_minor) FILTER (WHERE is_dispute), 0) AS BIGINT) AS net_minor
FROM inside
GROUP BY currency
ORDER BY currency NULLS LAST
