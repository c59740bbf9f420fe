-- A finding's provider side: the payments with id $id, or made under reference $id.
SELECT id, amount_minor, currency, status, reference, created_at, gone_in_run
FROM payments
WHERE id = $id OR reference = $id
ORDER BY id
LIMIT 20
