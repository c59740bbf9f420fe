-- Matches per rule for run $run_id (the report's books section): per matching rule
-- (sql/matching/) and currency, the books orders it matched, their amount, and how many of
-- them were matched with a difference kept (within tolerance, a cart, by hand); then the
-- proposals (rule suggested_match): suggested, or ambiguous (every candidate listed).
WITH matched AS (
    SELECT m.rule, coalesce(l.priority, 0) AS priority, m.books_currency AS currency,
           count(*) AS orders,
           CAST(sum(m.books_amount_minor) AS BIGINT) AS amount_minor,
           count(*) FILTER (WHERE coalesce(m.difference_minor, 0) <> 0) AS with_difference
    FROM ledger_matches AS m
    LEFT JOIN (SELECT rule, min(priority) AS priority FROM ledger_links GROUP BY rule) AS l
        ON l.rule = m.rule
    WHERE m.run_id = $run_id AND m.entity = 'order' AND m.state = 'matched'
    GROUP BY ALL
),
proposed AS (
    SELECT 'suggested_match' AS rule, 90 AS priority, o.currency,
           count(*) AS orders, CAST(sum(o.amount_minor) AS BIGINT) AS amount_minor,
           count(*) FILTER (WHERE s.n > 1 OR s.rivals > 1) AS with_difference
    FROM (SELECT order_key, count(*) AS n, max(rivals) AS rivals FROM ledger_suggestions
          WHERE run_id = $run_id GROUP BY order_key) AS s
    JOIN ledger_orders AS o ON coalesce(o.reference, o.order_id) = s.order_key
    GROUP BY ALL
)
SELECT rule, currency, orders, amount_minor, with_difference FROM (
    SELECT * FROM matched UNION ALL SELECT * FROM proposed
)
ORDER BY priority, rule, currency
