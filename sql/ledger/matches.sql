-- Classify the books against the provider (recon.ledger.loading), after the matching rules
-- (sql/matching/*.sql, recon.ledger.matching) linked orders to payments in `ledger_links`
-- and proposed the rest in `ledger_suggestions`.
-- Parameters: $run_id, $as_of (the run's start), $grace_hours, $window_days, $failed_statuses.
-- Live = not gone; settled = confirmed, partially_refunded or refunded. An item younger than
-- the grace (created_at > $as_of - grace) with no counterpart is pending, not a break.
--
-- Orders: one row per books order with the live payments the rules linked to it.
--   books status not settled: unexpected_payment when a payment is settled, else not_payable;
--   no settled payment: awaiting_payment (young) or order_missing_at_provider;
--   a settled payment in another currency: currency_mismatch;
--   paid together with other orders by one payment (rule payment_reference): cart;
--   settled amounts sum to the order amount, or the rule accepted a difference (amount_tolerance,
--   manual; kept in difference_minor): matched (one payment) or split (several);
--   several, and without the smallest one they still cover the order: duplicate_charge;
--   otherwise amount_mismatch.
-- Payments: one row per live settled payment no rule linked to an order:
--   awaiting_books (young) or payment_missing_from_books.
DELETE FROM ledger_matches;
-- In steps, one large join each, through temp tables: at a million orders against a million
-- payments the classification as one statement (links, payments and orders joined, grouped
-- and joined again) needed more of the night's 192 MiB than DuckDB could spill (issue 38).
-- The links of this load (temp match_links, recon.ledger.matching: the rowids of both sides,
-- so that a million orders join and group on integers) with their live payments.
CREATE OR REPLACE TEMP TABLE match_linked AS
SELECT l.order_row, l.rule, p.id, p.amount_minor, p.currency, p.status, p.created_at,
       p.status IN ('confirmed', 'partially_refunded', 'refunded') AS settled
FROM match_links AS l
JOIN payments AS p ON p.rowid = l.payment_row
WHERE p.gone_in_run IS NULL;
-- Each order with the payments the rules linked to it, summed per order (integer keys and
-- numbers only: a million orders group fast).
CREATE OR REPLACE TEMP TABLE match_per_order AS
SELECT
    o.rowid AS order_row,
    any_value(p.rule) AS rule,
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
    any_value(p.status) AS a_status,
    -- how far apart the order and its linked payments are, in whole days (the widest)
    CAST(max(abs(epoch(o.created_at) - epoch(p.created_at))) // 86400 AS BIGINT) AS days_apart
FROM ledger_orders AS o
LEFT JOIN match_linked AS p ON p.order_row = o.rowid
GROUP BY o.rowid;
INSERT INTO ledger_matches BY NAME
-- (each CTE read once: DuckDB would materialize one read twice, a million rows)
WITH keyed AS (  -- only the columns used
    SELECT o.rowid AS order_row, coalesce(o.reference, o.order_id) AS order_key, o.reference,
           o.order_id, o.amount_minor, o.currency, o.status, o.created_at
    FROM ledger_orders AS o
),
-- The ids of an order paid more than once (few): listed apart.
several AS (
    SELECT p.order_row, list(p.id ORDER BY p.id) AS ids
    FROM match_linked AS p
    SEMI JOIN match_per_order AS g ON g.order_row = p.order_row AND g.n_settled > 1
    WHERE p.settled
    GROUP BY p.order_row
),
-- Orders paid together by one payment (rule payment_reference): each order's share of the
-- payment is its own amount, but for the last order (by key), which takes the difference, so
-- that the shares add up to the payment.
carts AS (
    SELECT p.order_row, p.amount_minor AS paid,
           CAST(sum(o.amount_minor) OVER (PARTITION BY p.id) AS BIGINT) AS cart_total,
           row_number() OVER (PARTITION BY p.id ORDER BY coalesce(o.reference, o.order_id) DESC) = 1
               AS last_of_cart
    FROM match_linked AS p
    JOIN ledger_orders AS o ON o.rowid = p.order_row
    WHERE p.rule = 'payment_reference'
),
-- The best proposals of an order without links (ledger_suggestions): every one listed.
proposed AS (
    SELECT o.order_row, string_agg(s.payment_id, ', ' ORDER BY s.payment_id) AS ids,
           count(*) AS n, any_value(s.payment_id) AS one_id, max(s.rivals) AS rivals
    FROM ledger_suggestions AS s
    JOIN match_orders AS o ON o.order_key = s.order_key
    GROUP BY o.order_row
),
orders AS (
    SELECT
        o.*,
        g.rule, g.n_payments, g.n_settled, g.smallest, g.confirmed, g.refunded,
        CASE WHEN g.n_settled = 1 THEN [g.one_id] WHEN g.n_settled > 1 THEN v.ids ELSE [] END AS payment_ids,
        CASE WHEN g.no_amount > 0 THEN NULL
             WHEN c.order_row IS NULL THEN g.amount_sum
             WHEN c.last_of_cart THEN o.amount_minor - (c.cart_total - c.paid)
             ELSE o.amount_minor END AS provider_amount_minor,
        CASE WHEN c.last_of_cart THEN c.cart_total - c.paid END AS cart_difference,
        g.other_currency,
        CASE WHEN g.other_currency = 0 THEN o.currency WHEN g.other_currency = g.n_settled THEN g.other_code END
            AS provider_currency,
        g.a_status, g.days_apart,
        o.status IN ('confirmed', 'partially_refunded', 'refunded') AS expects_payment,
        o.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT)) AS young,
        s.ids AS candidate_ids, s.n AS candidates, s.one_id AS candidate_id, s.rivals AS candidate_rivals
    FROM keyed AS o
    JOIN match_per_order AS g ON g.order_row = o.order_row
    LEFT JOIN several AS v ON g.n_settled > 1 AND v.order_row = o.order_row
    LEFT JOIN carts AS c ON c.order_row = o.order_row
    LEFT JOIN proposed AS s ON g.n_payments = 0 AND s.order_row = o.order_row
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
            WHEN rule = 'payment_reference' THEN 'cart'
            WHEN provider_amount_minor = amount_minor OR rule IN ('amount_tolerance', 'manual')
                THEN CASE WHEN n_settled > 1 THEN 'split' ELSE 'matched' END
            WHEN n_settled > 1 AND provider_amount_minor - smallest >= amount_minor THEN 'duplicate_charge'
            ELSE 'amount_mismatch'
        END AS kind,
        CASE WHEN n_settled = 0 THEN NULL
             WHEN confirmed = n_settled THEN 'confirmed'
             WHEN refunded = n_settled THEN 'refunded'
             ELSE 'partially_refunded' END AS agg_status
    FROM orders
),
shaped AS (
    SELECT
        'order' AS entity, order_key AS entity_id, reference, order_id,
        amount_minor AS books_amount_minor, currency AS books_currency, status AS books_status,
        payment_ids, n_payments AS payments, n_settled AS settled, provider_amount_minor, provider_currency,
        agg_status AS provider_status,
        a_status AS provider_statuses,
        created_at AS item_at,
        kind,
        CASE WHEN kind IN ('matched', 'split', 'cart') THEN 'matched'
             WHEN kind = 'awaiting_payment' THEN 'pending'
             WHEN kind = 'not_payable' THEN 'none'
             ELSE 'break' END AS state,
        CASE WHEN n_payments > 0 THEN rule END AS rule,
        CASE WHEN kind = 'cart' THEN cart_difference
             WHEN kind IN ('matched', 'split') AND amount_minor <> provider_amount_minor
                 THEN amount_minor - provider_amount_minor END AS difference_minor,
        CASE WHEN candidates = 1 AND candidate_rivals = 1 THEN candidate_id
             WHEN candidates >= 1 THEN 'ambiguous: ' || candidate_ids END AS best_candidate,
        days_apart,
        $run_id AS run_id
    FROM classified
)
-- What differs, for the orders that are breaks (worded for those only, not for a million
-- matches): each field with both values; the dates when more than the window apart. Worded
-- here, in the statement that classifies, with the currencies joined once (recon_money's
-- lookup per row, or an UPDATE joining a million breaks back to their links and payments,
-- did not fit the night's memory at a million orders, issue 38); amounts as recon_money
-- writes them (sql/reference/money.sql).
SELECT
    s.* EXCLUDE (days_apart),
    CASE WHEN s.state = 'break' OR s.kind = 'unexpected_payment' THEN nullif(concat_ws('; ',
        CASE WHEN s.kind IN ('amount_mismatch', 'duplicate_charge')
             THEN 'amount: books ' || coalesce(s.books_currency, '(no currency)') || ' '
                  || recon_minor_text(s.books_amount_minor, bc.exponent)
                  || ', provider ' || coalesce(s.provider_currency, '(no currency)') || ' '
                  || recon_minor_text(s.provider_amount_minor, pc.exponent) END,
        CASE WHEN s.kind = 'currency_mismatch'
             THEN 'currency: books ' || s.books_currency || ', provider '
                  || coalesce(s.provider_currency, 'several') END,
        CASE WHEN s.settled > 0 AND s.books_status IS DISTINCT FROM s.provider_status
             THEN 'status: books ' || s.books_status || ', provider ' || s.provider_status END,
        CASE WHEN s.days_apart > $window_days THEN 'date: ' || s.days_apart || ' days apart' END,
        CASE WHEN s.settled = 0 AND s.payments > 0
             THEN 'status: books ' || s.books_status || ', provider ' || s.provider_statuses
                  || ' (not settled)' END
    ), '') END AS differs
FROM shaped AS s
LEFT JOIN currencies AS bc ON bc.code = s.books_currency
LEFT JOIN currencies AS pc ON pc.code = s.provider_currency;
-- Live settled payments no rule linked to an order.
INSERT INTO ledger_matches BY NAME
WITH proposed AS (
    SELECT payment_id, string_agg(order_key, ', ' ORDER BY order_key) AS keys, count(*) AS n,
           max(candidates) AS candidates
    FROM ledger_suggestions GROUP BY payment_id
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
ANTI JOIN match_links AS l ON l.payment_row = p.rowid
LEFT JOIN proposed AS s ON s.payment_id = p.id
WHERE p.gone_in_run IS NULL
  AND p.status IN ('confirmed', 'partially_refunded', 'refunded');

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
