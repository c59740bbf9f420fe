-- name: normalised_reference
-- description: The references agree once trimmed, compared case-insensitively, and cut by the optional pattern of each side ([ledger.match] books_reference / provider_reference); only when one order has that reference.
-- priority: 20
-- cardinality: 1:N
-- claims: unmatched
-- parameters: [books_pattern, provider_pattern]
WITH books AS (
    SELECT ledger_reference_key(reference, $books_pattern) AS k, any_value(order_key) AS order_key
    FROM unmatched_orders
    WHERE reference IS NOT NULL
    GROUP BY k
    HAVING count(*) = 1
),
provider AS (
    SELECT id, ledger_reference_key(reference, $provider_pattern) AS k
    FROM unmatched_payments
    WHERE reference IS NOT NULL AND trim(reference) <> ''
)
SELECT b.order_key, p.id AS payment_id
FROM books AS b
JOIN provider AS p ON p.k = b.k
WHERE b.k <> ''
