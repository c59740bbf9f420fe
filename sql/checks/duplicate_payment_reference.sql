-- name: duplicate_payment_reference
-- description: A payment whose non-empty merchant reference is shared by another live payment.
-- severity: warn
-- requires: [payments]
-- tolerates: [payments]
-- tags: [payments]
WITH referenced AS (
    SELECT p.id, p.reference, p.currency, p.amount_minor
    FROM payments AS p
    WHERE p.gone_in_run IS NULL AND p.reference IS NOT NULL AND p.reference <> ''
),
candidates AS (
    -- Hash values seen twice, found by sorting 64-bit hashes and comparing neighbours: on
    -- millions of distinct references this is several times cheaper than a GROUP BY with
    -- millions of groups. The exact grouping below, on the reference itself, drops any
    -- hash collision.
    SELECT DISTINCT reference_hash
    FROM (
        SELECT reference_hash, lag(reference_hash) OVER (ORDER BY reference_hash) AS previous_hash
        FROM (SELECT hash(reference) AS reference_hash FROM referenced)
    )
    WHERE reference_hash = previous_hash
),
shared AS (
    SELECT r.reference, count(*) AS payment_count, list(r.id ORDER BY r.id)[1:5] AS some_ids
    FROM referenced AS r
    SEMI JOIN candidates AS c ON c.reference_hash = hash(r.reference)
    GROUP BY r.reference
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
