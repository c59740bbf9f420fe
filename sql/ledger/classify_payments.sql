-- The live settled payments no rule linked to an order (recon.ledger.loading, after
-- sql/ledger/classify_orders.sql): awaiting_books (young: created_at > $as_of - grace) or
-- payment_missing_from_books. Parameters: $run_id, $as_of (the run's start), $grace_hours;
-- $lo and $hi: the range of payments rowids classified (a range at a time, like the orders:
-- a million payments anti-joined with a million links at once did not fit the night's
-- 192 MiB beside the rest, issue 38).
INSERT INTO ledger_matches BY NAME
WITH proposed AS (
    SELECT payment_id, string_agg(order_key, ', ' ORDER BY order_key) AS keys, count(*) AS n,
           max(candidates) AS candidates
    FROM ledger_suggestions
    WHERE payment_id IN (SELECT id FROM payments WHERE rowid BETWEEN $lo AND $hi)
    GROUP BY payment_id
)
SELECT
    'payment' AS entity, p.id AS entity_id, p.reference, NULL AS order_id,
    [p.id] AS payment_ids, 1 AS payments, 1 AS settled, p.amount_minor AS provider_amount_minor,
    p.currency AS provider_currency, p.status AS provider_status, p.status AS provider_statuses,
    p.created_at AS item_at,
    CASE WHEN p.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT))
         THEN 'awaiting_books' ELSE 'payment_missing_from_books' END AS kind,
    CASE WHEN p.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT))
         THEN 'pending' ELSE 'break' END AS state,
    CASE WHEN s.n = 1 AND s.candidates = 1 THEN s.keys
         WHEN s.n >= 1 THEN 'ambiguous: ' || s.keys END AS best_candidate,
    $run_id AS run_id
FROM payments AS p
ANTI JOIN match_links AS l ON l.payment_row = p.rowid AND l.payment_row BETWEEN $lo AND $hi
LEFT JOIN proposed AS s ON s.payment_id = p.id
WHERE p.rowid BETWEEN $lo AND $hi AND p.gone_in_run IS NULL
  AND p.status IN ('confirmed', 'partially_refunded', 'refunded');
