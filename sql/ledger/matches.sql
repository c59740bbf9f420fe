-- After sql/ledger/classify_payments.sql (recon.ledger.loading): the refunds.
-- Parameters: $run_id, $as_of (the run's start), $grace_hours, $failed_statuses. Live =
-- not gone; settled = confirmed, partially_refunded or refunded. An item younger than the
-- grace (created_at > $as_of - grace) with no counterpart is pending, not a break.
-- Refunds. A books refund resolves to a live payment by payment_id, else by reference (the
-- one settled payment with it, or the one payment when none is settled); several: ambiguous.
DELETE FROM ledger_refund_matches;
INSERT INTO ledger_refund_matches BY NAME
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
    'books' AS side, b.refund_key, b.refund_id, b.payment_id AS books_payment_id,
    b.reference AS books_reference, b.amount_minor AS books_amount_minor,
    b.currency AS books_currency, b.resolved AS payment_id, b.how AS resolution,
    pay.currency AS payment_currency, p.payment_id AS provider_payment_id,
    p.amount_minor AS provider_amount_minor, p.currency AS provider_currency,
    p.status AS provider_status, p.counted AS provider_counted, b.created_at AS item_at,
    b.created_at > (SELECT t FROM young_after) AS young,
    $run_id AS run_id
FROM books AS b
LEFT JOIN live AS pay ON pay.id = b.resolved
LEFT JOIN provider AS p ON p.id = b.refund_id
UNION ALL
SELECT
    'provider' AS side, p.id AS refund_key, p.id AS refund_id, NULL AS books_payment_id,
    NULL AS books_reference, NULL AS books_amount_minor, NULL AS books_currency,
    p.payment_id, 'provider' AS resolution, l.currency AS payment_currency,
    p.payment_id AS provider_payment_id, p.amount_minor AS provider_amount_minor,
    p.currency AS provider_currency, p.status AS provider_status,
    p.counted AS provider_counted, p.created_at AS item_at,
    coalesce(p.created_at > (SELECT t FROM young_after), false) AS young,
    $run_id AS run_id
FROM provider AS p
JOIN payments AS l ON l.id = p.payment_id AND l.gone_in_run IS NULL
SEMI JOIN ledger_links AS o ON o.payment_id = l.id
ANTI JOIN (SELECT refund_id FROM ledger_refunds WHERE refund_id IS NOT NULL) AS r ON r.refund_id = p.id
WHERE p.counted;

-- Per live settled payment the books cover (its reference is a books order, or a books
-- refund resolves to it): the books' refund total in its currency against its status.
-- A confirmed payment with no books refund agrees by definition and gets no row.
DELETE FROM ledger_payment_refunds;
INSERT INTO ledger_payment_refunds BY NAME
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
           OR (p.status <> 'confirmed' AND p.id IN (SELECT payment_id FROM ledger_links)))
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
    id AS payment_id, reference, status, amount_minor, currency, n AS books_refunds,
    total AS books_total_minor, settled_total AS books_settled_minor, expected,
    CASE WHEN expected = status THEN 'consistent'
         WHEN settled_total <> total AND expected_settled = status THEN 'pending'
         ELSE 'break' END AS state,
    $run_id AS run_id
FROM verdicts;
