-- Match the books against the provider (recon.ledger.loading, after the books are landed).
-- Parameters: $run_id, $as_of (the run's start), $grace_hours, $failed_statuses.
-- Live = not gone; settled = confirmed, partially_refunded or refunded. An item younger than
-- the grace (created_at > $as_of - grace) with no counterpart is pending, not a break.
--
-- Orders: one row per books order with the live payments carrying its reference.
--   books status not settled: unexpected_payment when a payment is settled, else not_payable;
--   no settled payment: awaiting_payment (young) or order_missing_at_provider;
--   a settled payment in another currency: currency_mismatch;
--   settled amounts sum to the order amount: matched (one payment) or split (several);
--   several, and without the smallest one they still cover the order: duplicate_charge;
--   otherwise amount_mismatch.
-- Payments: one row per live settled payment whose reference no books order carries:
--   awaiting_books (young) or payment_missing_from_books.
DELETE FROM ledger_matches;
INSERT INTO ledger_matches
WITH live AS (
    SELECT id, reference, amount_minor, currency, status, created_at,
           status IN ('confirmed', 'partially_refunded', 'refunded') AS settled
    FROM payments
    WHERE gone_in_run IS NULL AND reference IS NOT NULL AND reference <> ''
),
by_reference AS (
    SELECT
        reference,
        count(*) AS payments,
        count(*) FILTER (WHERE settled) AS settled,
        list(id ORDER BY id) FILTER (WHERE settled) AS payment_ids,
        CASE WHEN count(*) FILTER (WHERE settled) = count(amount_minor) FILTER (WHERE settled)
             THEN CAST(sum(amount_minor) FILTER (WHERE settled) AS BIGINT) END AS provider_amount_minor,
        min(amount_minor) FILTER (WHERE settled) AS smallest,
        count(DISTINCT coalesce(currency, '')) FILTER (WHERE settled) AS currencies,
        min(currency) FILTER (WHERE settled) AS one_currency,
        bool_and(status = 'confirmed') FILTER (WHERE settled) AS all_confirmed,
        bool_and(status = 'refunded') FILTER (WHERE settled) AS all_refunded,
        list(DISTINCT status ORDER BY status) AS statuses
    FROM live
    GROUP BY reference
),
orders AS (
    SELECT
        o.*,
        coalesce(b.payments, 0) AS n_payments,
        coalesce(b.settled, 0) AS n_settled,
        b.payment_ids, b.provider_amount_minor, b.smallest, b.currencies, b.one_currency,
        b.all_confirmed, b.all_refunded, b.statuses,
        o.status IN ('confirmed', 'partially_refunded', 'refunded') AS expects_payment,
        o.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT)) AS young
    FROM ledger_orders AS o
    LEFT JOIN by_reference AS b ON b.reference = o.reference
),
classified AS (
    SELECT
        *,
        CASE
            WHEN NOT expects_payment
                THEN CASE WHEN n_settled > 0 THEN 'unexpected_payment' ELSE 'not_payable' END
            WHEN n_settled = 0
                THEN CASE WHEN young THEN 'awaiting_payment' ELSE 'order_missing_at_provider' END
            WHEN currencies > 1 OR one_currency IS DISTINCT FROM currency THEN 'currency_mismatch'
            WHEN provider_amount_minor = amount_minor
                THEN CASE WHEN n_settled > 1 THEN 'split' ELSE 'matched' END
            WHEN n_settled > 1 AND provider_amount_minor - smallest >= amount_minor THEN 'duplicate_charge'
            ELSE 'amount_mismatch'
        END AS kind
    FROM orders
)
SELECT
    'order', reference, reference, order_id, amount_minor, currency, status,
    payment_ids, n_payments, n_settled, provider_amount_minor,
    CASE WHEN currencies = 1 THEN one_currency END,
    CASE WHEN n_settled = 0 THEN NULL
         WHEN all_confirmed THEN 'confirmed'
         WHEN all_refunded THEN 'refunded'
         ELSE 'partially_refunded' END,
    coalesce(statuses, []),
    created_at,
    kind,
    CASE WHEN kind IN ('matched', 'split') THEN 'matched'
         WHEN kind = 'awaiting_payment' THEN 'pending'
         WHEN kind = 'not_payable' THEN 'none'
         ELSE 'break' END,
    $run_id
FROM classified
UNION ALL
SELECT
    'payment', p.id, p.reference, NULL, NULL, NULL, NULL,
    [p.id], 1, 1, p.amount_minor, p.currency, p.status, [p.status],
    p.created_at,
    CASE WHEN p.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT))
         THEN 'awaiting_books' ELSE 'payment_missing_from_books' END,
    CASE WHEN p.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT))
         THEN 'pending' ELSE 'break' END,
    $run_id
FROM payments AS p
WHERE p.gone_in_run IS NULL
  AND p.status IN ('confirmed', 'partially_refunded', 'refunded')
  AND NOT EXISTS (SELECT 1 FROM ledger_orders AS o WHERE o.reference = p.reference);

-- Refunds. A books refund resolves to a live payment by payment_id, else by reference (the
-- one settled payment with it, or the one payment when none is settled); several: ambiguous.
DELETE FROM ledger_refund_matches;
INSERT INTO ledger_refund_matches
WITH live AS (
    SELECT id, reference, currency, status IN ('confirmed', 'partially_refunded', 'refunded') AS settled
    FROM payments WHERE gone_in_run IS NULL
),
by_reference AS (
    SELECT reference,
           count(*) AS n, count(*) FILTER (WHERE settled) AS n_settled,
           min(id) AS any_id, min(id) FILTER (WHERE settled) AS settled_id
    FROM live WHERE reference IS NOT NULL AND reference <> ''
    GROUP BY reference
),
books AS (
    SELECT
        r.*,
        coalesce(r.refund_id, regexp_extract(r.source, '[^/]*$') || '#' || r.row_number) AS refund_key,
        CASE
            WHEN r.payment_id IS NOT NULL THEN (SELECT l.id FROM live AS l WHERE l.id = r.payment_id)
            WHEN b.n_settled = 1 THEN b.settled_id
            WHEN b.n_settled = 0 AND b.n = 1 THEN b.any_id
        END AS resolved,
        CASE
            WHEN r.payment_id IS NOT NULL THEN 'payment_id'
            WHEN b.n IS NULL THEN 'unknown_payment'
            WHEN b.n_settled = 1 OR (b.n_settled = 0 AND b.n = 1) THEN 'reference'
            ELSE 'ambiguous_reference'
        END AS how
    FROM ledger_refunds AS r
    LEFT JOIN by_reference AS b ON r.payment_id IS NULL AND b.reference = r.reference
),
provider AS (
    SELECT id, payment_id, amount_minor, currency, status, created_at,
           NOT list_contains($failed_statuses, lower(coalesce(status, ''))) AS counted
    FROM refunds WHERE gone_in_run IS NULL
)
SELECT
    'books', b.refund_key, b.refund_id, b.payment_id, b.reference, b.amount_minor, b.currency,
    b.resolved,
    CASE WHEN b.how = 'payment_id' AND b.resolved IS NULL THEN 'unknown_payment' ELSE b.how END,
    (SELECT l.currency FROM live AS l WHERE l.id = b.resolved),
    p.payment_id, p.amount_minor, p.currency, p.status, p.counted,
    b.created_at,
    b.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT)),
    $run_id
FROM books AS b
LEFT JOIN provider AS p ON p.id = b.refund_id
UNION ALL
SELECT
    'provider', p.id, p.id, NULL, NULL, NULL, NULL,
    p.payment_id, 'provider', l.currency,
    p.payment_id, p.amount_minor, p.currency, p.status, p.counted,
    p.created_at,
    coalesce(p.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT)), false),
    $run_id
FROM provider AS p
JOIN payments AS l ON l.id = p.payment_id AND l.gone_in_run IS NULL
WHERE p.counted
  AND EXISTS (SELECT 1 FROM ledger_orders AS o WHERE o.reference = l.reference)
  AND NOT EXISTS (SELECT 1 FROM ledger_refunds AS r WHERE r.refund_id = p.id);

-- Per live settled payment the books cover (its reference is a books order, or a books
-- refund resolves to it): the books' refund total in its currency against its status.
DELETE FROM ledger_payment_refunds;
INSERT INTO ledger_payment_refunds
WITH totals AS (
    SELECT
        payment_id,
        count(*) AS n,
        CAST(coalesce(sum(books_amount_minor) FILTER (WHERE books_currency = payment_currency), 0) AS BIGINT) AS total,
        CAST(coalesce(sum(books_amount_minor) FILTER (WHERE books_currency = payment_currency AND NOT young), 0) AS BIGINT) AS settled_total
    FROM ledger_refund_matches
    WHERE side = 'books' AND payment_id IS NOT NULL
    GROUP BY payment_id
),
covered AS (
    SELECT p.id, p.reference, p.status, p.amount_minor, p.currency,
           coalesce(t.n, 0) AS n, coalesce(t.total, 0) AS total, coalesce(t.settled_total, 0) AS settled_total
    FROM payments AS p
    LEFT JOIN totals AS t ON t.payment_id = p.id
    WHERE p.gone_in_run IS NULL
      AND p.status IN ('confirmed', 'partially_refunded', 'refunded')
      AND p.amount_minor IS NOT NULL
      AND (t.payment_id IS NOT NULL
           OR EXISTS (SELECT 1 FROM ledger_orders AS o WHERE o.reference = p.reference))
),
expected AS (
    SELECT
        *,
        CASE WHEN total = 0 THEN 'confirmed'
             WHEN total < amount_minor THEN 'partially_refunded'
             WHEN total = amount_minor THEN 'refunded'
             ELSE 'over_refunded' END AS expected,
        CASE WHEN settled_total = 0 THEN 'confirmed'
             WHEN settled_total < amount_minor THEN 'partially_refunded'
             WHEN settled_total = amount_minor THEN 'refunded'
             ELSE 'over_refunded' END AS expected_settled
    FROM covered
)
SELECT
    id, reference, status, amount_minor, currency, n, total, settled_total, expected,
    CASE WHEN expected = status THEN 'consistent'
         WHEN settled_total <> total AND expected_settled = status THEN 'pending'
         ELSE 'break' END,
    $run_id
FROM expected;
