-- "Books vs provider" per currency for run $run_id (the report's first section after the
-- run status). Books total: orders the books say were paid; provider total: live settled
-- payments; matched: orders whose settled payments add up (the same on both sides);
-- pending: younger than the grace with no counterpart; net difference = books - provider.
WITH m AS (
    SELECT * FROM ledger_matches WHERE run_id = $run_id
),
books AS (
    SELECT
        books_currency AS currency,
        count(*) AS orders,
        CAST(sum(books_amount_minor) AS BIGINT) AS books_total,
        CAST(coalesce(sum(books_amount_minor) FILTER (WHERE state = 'matched'), 0) AS BIGINT) AS matched,
        CAST(coalesce(sum(books_amount_minor) FILTER (WHERE state = 'pending'), 0) AS BIGINT) AS pending_books
    FROM m
    WHERE entity = 'order' AND books_status IN ('confirmed', 'partially_refunded', 'refunded')
    GROUP BY books_currency
),
provider AS (
    SELECT currency, count(*) AS payments, CAST(sum(amount_minor) AS BIGINT) AS provider_total
    FROM payments
    WHERE gone_in_run IS NULL AND amount_minor IS NOT NULL
      AND status IN ('confirmed', 'partially_refunded', 'refunded')
    GROUP BY currency
),
provider_pending AS (
    SELECT provider_currency AS currency, CAST(sum(provider_amount_minor) AS BIGINT) AS pending_provider
    FROM m WHERE entity = 'payment' AND state = 'pending'
    GROUP BY provider_currency
)
SELECT
    coalesce(b.currency, p.currency) AS currency,
    coalesce(b.orders, 0) AS orders,
    coalesce(p.payments, 0) AS payments,
    coalesce(b.books_total, 0) AS books_total,
    coalesce(p.provider_total, 0) AS provider_total,
    coalesce(b.matched, 0) AS matched,
    coalesce(b.books_total, 0) - coalesce(b.matched, 0) - coalesce(b.pending_books, 0) AS unmatched_books,
    coalesce(p.provider_total, 0) - coalesce(b.matched, 0) - coalesce(pp.pending_provider, 0) AS unmatched_provider,
    coalesce(b.books_total, 0) - coalesce(p.provider_total, 0) AS net_difference,
    coalesce(b.pending_books, 0) AS pending_books,
    coalesce(pp.pending_provider, 0) AS pending_provider
FROM books AS b
FULL OUTER JOIN provider AS p ON p.currency = b.currency
LEFT JOIN provider_pending AS pp ON pp.currency = coalesce(b.currency, p.currency)
ORDER BY currency
