-- Classify the books orders against the provider (recon.ledger.loading), after the matching rules
-- (sql/matching/*.sql, recon.ledger.matching) linked orders to payments in `ledger_links`
-- and proposed the rest in `ledger_suggestions`.
-- Parameters: $run_id, $as_of (the run's start), $grace_hours, $window_days; $lo and $hi:
-- the range of ledger_orders rowids classified (recon.ledger.loading runs it a range at a
-- time: every order's row depends on its own links only; carts, which span orders, were
-- made for all of them by sql/ledger/classify_setup.sql).
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
INSERT INTO ledger_matches BY NAME
-- (each CTE read once: DuckDB would materialize one read twice)
-- Each order of the range (the columns used) with the payments the rules linked to it,
-- summed per order (grouped on the order's rowid).
WITH per_order AS (
    SELECT
        o.rowid AS order_row,
        any_value(coalesce(o.reference, o.order_id)) AS order_key,
        any_value(o.reference) AS reference,
        any_value(o.order_id) AS order_id,
        any_value(o.amount_minor) AS amount_minor,
        any_value(o.currency) AS currency,
        any_value(o.status) AS status,
        any_value(o.created_at) AS created_at,
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
    LEFT JOIN match_linked AS p ON p.order_row = o.rowid AND p.order_row BETWEEN $lo AND $hi
    WHERE o.rowid BETWEEN $lo AND $hi
    GROUP BY o.rowid
),
-- The ids of an order paid more than once (few): listed apart.
several AS (
    SELECT p.order_row, list(p.id ORDER BY p.id) AS ids
    FROM match_linked AS p
    SEMI JOIN per_order AS g ON g.order_row = p.order_row AND g.n_settled > 1
    WHERE p.settled AND p.order_row BETWEEN $lo AND $hi
    GROUP BY p.order_row
),
-- The best proposals of an order without links (ledger_suggestions): every one listed.
proposed AS (
    SELECT o.order_row, string_agg(s.payment_id, ', ' ORDER BY s.payment_id) AS ids,
           count(*) AS n, any_value(s.payment_id) AS one_id, max(s.rivals) AS rivals
    FROM ledger_suggestions AS s
    JOIN match_orders AS o ON o.order_key = s.order_key
    WHERE o.order_row BETWEEN $lo AND $hi
    GROUP BY o.order_row
),
orders AS (
    SELECT
        g.order_row, g.order_key, g.reference, g.order_id, g.amount_minor, g.currency, g.status,
        g.created_at,
        g.rule, g.n_payments, g.n_settled, g.smallest, g.confirmed, g.refunded,
        CASE WHEN g.n_settled = 1 THEN [g.one_id] WHEN g.n_settled > 1 THEN v.ids ELSE [] END AS payment_ids,
        CASE WHEN g.no_amount > 0 THEN NULL
             WHEN c.order_row IS NULL THEN g.amount_sum
             WHEN c.last_of_cart THEN g.amount_minor - (c.cart_total - c.paid)
             ELSE g.amount_minor END AS provider_amount_minor,
        CASE WHEN c.last_of_cart THEN c.cart_total - c.paid END AS cart_difference,
        g.other_currency,
        CASE WHEN g.other_currency = 0 THEN g.currency WHEN g.other_currency = g.n_settled THEN g.other_code END
            AS provider_currency,
        g.a_status, g.days_apart,
        g.status IN ('confirmed', 'partially_refunded', 'refunded') AS expects_payment,
        g.created_at > CAST($as_of AS TIMESTAMPTZ) - to_hours(CAST($grace_hours AS BIGINT)) AS young,
        s.ids AS candidate_ids, s.n AS candidates, s.one_id AS candidate_id, s.rivals AS candidate_rivals
    FROM per_order AS g
    LEFT JOIN several AS v ON g.n_settled > 1 AND v.order_row = g.order_row
    LEFT JOIN match_carts AS c ON c.order_row = g.order_row
    LEFT JOIN proposed AS s ON g.n_payments = 0 AND s.order_row = g.order_row
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
