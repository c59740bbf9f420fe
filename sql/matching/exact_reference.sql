-- name: exact_reference
-- description: The order's reference is the payment's reference, exactly (every live payment with it: a split payment is several).
-- priority: 10
-- cardinality: 1:N
-- claims: unmatched
-- parameters: []
SELECT o.order_key, p.id AS payment_id
FROM unmatched_orders AS o
JOIN unmatched_payments AS p ON p.reference = o.reference
