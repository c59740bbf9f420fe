-- The roll-forward per check family and currency: the sum of the per-finding rows of
-- rollforward_items.sql (the temp table close_items), and whether they tie:
--   open_start + new - resolved + change = open_end (amounts), open_start + new - resolved =
--   open_end (counts). Computed, never assumed.
SELECT
    family, currency, CAST(count(*) AS BIGINT) AS findings,
    CAST(sum(open_start_count) AS BIGINT) AS open_start_count,
    CAST(sum(open_start_minor) AS BIGINT) AS open_start_minor,
    CAST(sum(new_count) AS BIGINT) AS new_count,
    CAST(sum(new_minor) AS BIGINT) AS new_minor,
    CAST(sum(resolved_count) AS BIGINT) AS resolved_count,
    CAST(sum(resolved_minor) AS BIGINT) AS resolved_minor,
    CAST(sum(change_minor) AS BIGINT) AS change_minor,
    CAST(sum(open_end_count) AS BIGINT) AS open_end_count,
    CAST(sum(open_end_minor) AS BIGINT) AS open_end_minor,
    sum(open_start_minor) + sum(new_minor) - sum(resolved_minor) + sum(change_minor)
        = sum(open_end_minor)
    AND sum(open_start_count) + sum(new_count) - sum(resolved_count) = sum(open_end_count)
        AS ties
FROM close_items
GROUP BY family, currency
ORDER BY family, currency NULLS LAST
