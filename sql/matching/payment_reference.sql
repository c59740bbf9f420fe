-- name: payment_reference
-- description: Several orders paid by one payment (a cart): orders whose payment_reference is the reference of exactly one unmatched settled payment, in their currency, whose amount their amounts add up to (within the tolerance).
-- priority: 40
-- cardinality: N:1
-- claims: unmatched
-- parameters: [tolerance_minor, tolerance_bps]
WITH carts AS (
    SELECT lower(trim(payment_reference)) AS k, list(order_key) AS orders,
           CAST(sum(amount_minor) AS BIGINT) AS total, count(DISTINCT currency) AS currencies,
           any_value(currency) AS currency
    FROM unmatched_orders
    WHERE payment_reference IS NOT NULL AND expects_payment
    GROUP BY k
),
paid AS (
    SELECT lower(trim(reference)) AS k, count(*) AS n, any_value(id) AS id,
           any_value(amount_minor) AS amount_minor, any_value(currency) AS currency
    FROM unmatched_payments
    WHERE settled AND reference IS NOT NULL
      AND lower(trim(reference)) IN (SELECT k FROM carts)
    GROUP BY k
)
SELECT unnest(c.orders) AS order_key, p.id AS payment_id
FROM carts AS c
JOIN paid AS p ON p.k = c.k
WHERE p.n = 1 AND c.currencies = 1 AND p.currency = c.currency
  AND abs(p.amount_minor - c.total) <= ledger_tolerance(c.total, $tolerance_minor, $tolerance_bps)
