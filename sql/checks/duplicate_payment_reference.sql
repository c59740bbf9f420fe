-- name: duplicate_payment_reference
-- description: A payment whose non-empty merchant reference is shared by another live payment.
-- severity: warn
-- requires: [payments]
-- tags: [payments]
WITH referenced AS (
    SELECT p.id, p.reference, p.currency, p.amount_minor
    FROM payments AS p
    WHERE p.gone_in_run IS NULL AND p.reference IS NOT NULL AND p.reference <> ''
),
shared AS (
    SELECT reference, count(*) AS payment_count, list(id ORDER BY id)[1:5] AS some_ids
    FROM referenced
    GROUP BY reference
    HAVING count(*) > 1
)
SELECT
    'payment' AS entity,
    r.id AS entity_id,
    r.currency,
    r.amount_minor,
    'duplicate_reference' AS issue_type,
    'reference ' || r.reference || ' is shared by ' || s.payment_count || ' live payments ('
        || array_to_string(s.some_ids, ', ') || CASE WHEN s.payment_count > 5 THEN ', …' ELSE '' END
        || ')' AS detail
FROM referenced AS r
JOIN shared AS s ON s.reference = r.reference
