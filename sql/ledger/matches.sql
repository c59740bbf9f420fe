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
-- Each order with its payments, summed per order (grouped by the order's row: an integer
-- key, and numbers only — a million orders group fast).
per_order AS (
    SELECT
        o.rowid AS order_row,
        count(p.id) AS n_payments,
        count(*) FILTER (WHERE p.settled) AS n_settled,
        count(*) FILTER (WHERE p.settled AND p.amount_minor IS NULL) AS no_amount,
        CAST(sum(p.amount_minor) FILTER (WHERE p.settled) AS BIGINT) AS amount_sum,
        min(p.amount_minor) FILTER (WHERE p.settled) AS smallest,
        count(*) FILTER (WHERE p.settled AND p.currency IS DISTINCT FROM o.currency) AS other_currency,
        count(*) FILTER (WHERE p.settled AND p.status = 'confirmed') AS confirmed,
        count(*) FILTER (WHERE p.settled AND p.status = 'refunded') AS refunded,
        any_value(p.id) FILTER (WHERE p.settled) AS one_id,
        any_value(p.currency) FILTER (WHERE p.settled AND p.currency IS DISTINCT FROM o.currency) AS other_code,
        any_value(p.status) AS a_status
    FROM ledger_orders AS o
    LEFT JOIN live AS p ON p.reference = o.reference
    GROUP BY o.rowid
),
-- The ids of an order paid more than once (few): listed apart.
several AS (
    SELECT p.reference, list(p.id ORDER BY p.id) AS ids
    FROM live AS p
    SEMI JOIN (
        SELECT o.reference FROM ledger_orders AS o JOIN per_order AS g ON g.order_row = o.rowid
        WHERE g.n_settled > 1
    ) AS s ON s.reference = p.reference
    WHERE p.settled
    GROUP BY p.reference
),
orders AS (
    SELECT
        o.*,
        g.n_payments, g.n_settled, g.smallest, g.confirmed, g.refunded,
        CASE WHEN g.n_settled = 1 THEN [g.one_id] WHEN g.n_settled > 1 THEN v.ids ELSE [] END AS payment_ids,
        CASE WHEN g.no_amount = 0 THEN g.amount_sum END AS provider_amount_minor,
        g.other_currency,
        -- the settled payments' currency: the order's, or the other one when none has it
        CASE WHEN g.other_currency = 0 THEN o.currency WHEN g.other_currency = g.n_settled THEN g.other_code END
            AS provider_currency,
        g.a_status,
        o.status IN ('confirmed', 'partially_refunded', 'refunded') AS expects_payment,
        o.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT)) AS young
    FROM ledger_orders AS o
    JOIN per_order AS g ON g.order_row = o.rowid
    LEFT JOIN several AS v ON g.n_settled > 1 AND v.reference = o.reference
),
classified AS (
    SELECT
        *,
        CASE
            WHEN NOT expects_payment
                THEN CASE WHEN n_settled > 0 THEN 'unexpected_payment' ELSE 'not_payable' END
            WHEN n_settled = 0
                THEN CASE WHEN young THEN 'awaiting_payment' ELSE 'order_missing_at_provider' END
            WHEN other_currency > 0 THEN 'currency_mismatch'
            WHEN provider_amount_minor = amount_minor
                THEN CASE WHEN n_settled > 1 THEN 'split' ELSE 'matched' END
            WHEN n_settled > 1 AND provider_amount_minor - smallest >= amount_minor THEN 'duplicate_charge'
            ELSE 'amount_mismatch'
        END AS kind
    FROM orders
)
SELECT
    'order', reference, reference, order_id, amount_minor, currency, status,
    payment_ids, n_payments, n_settled, provider_amount_minor, provider_currency,
    CASE WHEN n_settled = 0 THEN NULL
         WHEN confirmed = n_settled THEN 'confirmed'
         WHEN refunded = n_settled THEN 'refunded'
         ELSE 'partially_refunded' END,
    a_status,
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
    [p.id], 1, 1, p.amount_minor, p.currency, p.status, p.status,
    p.created_at,
    CASE WHEN p.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT))
         THEN 'awaiting_books' ELSE 'payment_missing_from_books' END,
    CASE WHEN p.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT))
         THEN 'pending' ELSE 'break' END,
    $run_id
FROM payments AS p
ANTI JOIN ledger_orders AS o ON o.reference = p.reference
WHERE p.gone_in_run IS NULL
  AND p.status IN ('confirmed', 'partially_refunded', 'refunded');

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
    FROM live
    WHERE reference IS NOT NULL AND reference <> ''
      AND reference IN (SELECT reference FROM ledger_refunds WHERE payment_id IS NULL)
    GROUP BY reference
),
books AS (
    SELECT
        r.*,
        coalesce(r.refund_id, regexp_extract(r.source, '[^/]*$') || '#' || r.row_number) AS refund_key,
        CASE
            WHEN r.payment_id IS NOT NULL THEN byid.id
            WHEN b.n_settled = 1 THEN b.settled_id
            WHEN b.n_settled = 0 AND b.n = 1 THEN b.any_id
        END AS resolved,
        CASE
            WHEN r.payment_id IS NOT NULL THEN CASE WHEN byid.id IS NULL THEN 'unknown_payment' ELSE 'payment_id' END
            WHEN b.n IS NULL THEN 'unknown_payment'
            WHEN b.n_settled = 1 OR (b.n_settled = 0 AND b.n = 1) THEN 'reference'
            ELSE 'ambiguous_reference'
        END AS how
    FROM ledger_refunds AS r
    LEFT JOIN live AS byid ON byid.id = r.payment_id
    LEFT JOIN by_reference AS b ON r.payment_id IS NULL AND b.reference = r.reference
),
provider AS (
    SELECT id, payment_id, amount_minor, currency, status, created_at,
           NOT list_contains($failed_statuses, lower(coalesce(status, ''))) AS counted
    FROM refunds WHERE gone_in_run IS NULL
),
young_after AS (
    SELECT CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT)) AS t
)
SELECT
    'books', b.refund_key, b.refund_id, b.payment_id, b.reference, b.amount_minor, b.currency,
    b.resolved, b.how, pay.currency,
    p.payment_id, p.amount_minor, p.currency, p.status, p.counted,
    b.created_at,
    b.created_at > (SELECT t FROM young_after),
    $run_id
FROM books AS b
LEFT JOIN live AS pay ON pay.id = b.resolved
LEFT JOIN provider AS p ON p.id = b.refund_id
UNION ALL
SELECT
    'provider', p.id, p.id, NULL, NULL, NULL, NULL,
    p.payment_id, 'provider', l.currency,
    p.payment_id, p.amount_minor, p.currency, p.status, p.counted,
    p.created_at,
    coalesce(p.created_at > (SELECT t FROM young_after), false),
    $run_id
FROM provider AS p
JOIN payments AS l ON l.id = p.payment_id AND l.gone_in_run IS NULL
SEMI JOIN ledger_orders AS o ON o.reference = l.reference
ANTI JOIN (SELECT refund_id FROM ledger_refunds WHERE refund_id IS NOT NULL) AS r ON r.refund_id = p.id
WHERE p.counted;

-- Per live settled payment the books cover (its reference is a books order, or a books
-- refund resolves to it): the books' refund total in its currency against its status.
-- A confirmed payment with no books refund agrees by definition and gets no row.
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
    -- live settled payments whose order is in the books or that a books refund is of; those
    -- with no books refund and confirmed are consistent by definition and left out
    SELECT
        p.id, p.reference, p.status, p.amount_minor, p.currency,
        coalesce(t.n, 0) AS n, coalesce(t.total, 0) AS total, coalesce(t.settled_total, 0) AS settled_total
    FROM payments AS p
    LEFT JOIN totals AS t ON t.payment_id = p.id
    WHERE p.gone_in_run IS NULL
      AND p.status IN ('confirmed', 'partially_refunded', 'refunded')
      AND p.amount_minor IS NOT NULL
      AND (t.payment_id IS NOT NULL
           OR (p.status <> 'confirmed' AND p.reference IN (SELECT reference FROM ledger_orders)))
),
verdicts AS (
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
FROM verdicts;
