-- The books orders classified against the provider (recon.ledger.loading), before
-- sql/ledger/classify_orders.sql classifies them a range of orders at a time and
-- sql/ledger/matches.sql the rest: what every range reads, made once. Parameters: none.
-- Through temp tables, one large join each: at a million orders against a million payments
-- the classification as one statement (links, payments and orders joined, grouped and
-- joined again) needed more of the night's 192 MiB than DuckDB could spill (issue 38).
DELETE FROM ledger_matches;
-- The links of this load (temp match_links, recon.ledger.matching: the rowids of both sides,
-- so that a million orders join and group on integers) with their live payments.
CREATE OR REPLACE TEMP TABLE match_linked AS
SELECT l.order_row, l.rule, p.id, p.amount_minor, p.currency, p.status, p.created_at,
       p.status IN ('confirmed', 'partially_refunded', 'refunded') AS settled
FROM match_links AS l
JOIN payments AS p ON p.rowid = l.payment_row
WHERE p.gone_in_run IS NULL;
-- Orders paid together by one payment (rule payment_reference): each order's share of the
-- payment is its own amount, but for the last order (by key), which takes the difference, so
-- that the shares add up to the payment.
-- A cart's orders may fall in different ranges: made once, for all of them.
CREATE OR REPLACE TEMP TABLE match_carts AS
SELECT p.order_row, p.amount_minor AS paid,
       CAST(sum(o.amount_minor) OVER (PARTITION BY p.id) AS BIGINT) AS cart_total,
       row_number() OVER (PARTITION BY p.id ORDER BY coalesce(o.reference, o.order_id) DESC) = 1
           AS last_of_cart
FROM match_linked AS p
JOIN ledger_orders AS o ON o.rowid = p.order_row
WHERE p.rule = 'payment_reference';
