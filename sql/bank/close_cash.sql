-- The close pack's Cash sheet (recon.close): per currency, the provider's settlements rolled
-- forward over the period [$period_start, $period_end), from bank_settlements (the newest
-- night's statements). A settlement is in transit from its business day until its credit's
-- value date (for ever, when none came):
--   in_transit_start + expected - received + differences = in_transit_end
-- where received is what the credits of the period brought and differences what they were
-- off by (received - expected). `ties` says whether it holds: computed, never assumed.
WITH s AS (
    SELECT currency, business_day, net_minor, value_date, received_minor, difference_minor, state,
           CAST($period_start AS DATE) AS p_start, CAST($period_end AS DATE) AS p_end
    FROM bank_settlements
    WHERE net_minor > 0 AND state NOT IN ('not_covered', 'nothing_due')
)
SELECT *,
       in_transit_start_minor + expected_minor - received_minor + differences_minor
           = in_transit_end_minor AS ties
FROM (
SELECT currency,
       CAST(coalesce(sum(net_minor) FILTER (WHERE business_day < p_start
            AND (value_date IS NULL OR value_date >= p_start)), 0) AS BIGINT) AS in_transit_start_minor,
       CAST(coalesce(sum(net_minor) FILTER (WHERE business_day >= p_start AND business_day < p_end), 0) AS BIGINT) AS expected_minor,
       CAST(count(*) FILTER (WHERE business_day >= p_start AND business_day < p_end) AS BIGINT) AS settlements,
       CAST(coalesce(sum(received_minor) FILTER (WHERE value_date >= p_start AND value_date < p_end
            AND business_day < p_end), 0) AS BIGINT) AS received_minor,
       CAST(coalesce(sum(difference_minor) FILTER (WHERE value_date >= p_start AND value_date < p_end
            AND business_day < p_end), 0) AS BIGINT) AS differences_minor,
       CAST(coalesce(sum(net_minor) FILTER (WHERE business_day < p_end
            AND (value_date IS NULL OR value_date >= p_end)), 0) AS BIGINT) AS in_transit_end_minor,
       CAST(coalesce(sum(net_minor) FILTER (WHERE business_day < p_end AND state = 'missing'), 0) AS BIGINT)
           AS of_which_missing_minor
FROM s
GROUP BY currency
)
ORDER BY currency
