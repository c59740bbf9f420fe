-- Books activity per currency for the period: the books' orders created inside it (as the
-- latest load read the books) and how many of them the provider matched (ledger_matches of
-- the same load: state 'matched'), with the match rate as a fraction of orders (shown as %).
-- Counts are `*_count`, amounts `*_minor` (close.xlsx shows them in the currency's units).
WITH orders AS (
    SELECT o.reference, o.currency, o.amount_minor, m.state
    FROM ledger_orders AS o
    LEFT JOIN ledger_matches AS m ON m.entity = 'order' AND m.entity_id = o.reference
    WHERE o.created_at >= $period_start AND o.created_at < $period_end
)
SELECT
    currency,
    CAST(count(*) AS BIGINT) AS order_count,
    CAST(sum(amount_minor) AS BIGINT) AS orders_minor,
    CAST(count(*) FILTER (WHERE state = 'matched') AS BIGINT) AS matched_count,
    CAST(coalesce(sum(amount_minor) FILTER (WHERE state = 'matched'), 0) AS BIGINT) AS matched_minor,
    CAST(count(*) FILTER (WHERE state = 'break') AS BIGINT) AS break_count,
    CAST(count(*) FILTER (WHERE state = 'pending') AS BIGINT) AS pending_count,
    round(count(*) FILTER (WHERE state = 'matched') / count(*), 4) AS match_rate
FROM orders
GROUP BY currency
ORDER BY currency
