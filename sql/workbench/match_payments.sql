-- The live payments a manual match names, with their amounts.
SELECT id, amount_minor FROM payments WHERE gone_in_run IS NULL AND list_contains($ids, id)
