-- The open ledger findings of the latest run on either side of a manual match: the order's
-- ($order) and the named payments' ($payments). `recon match` resolves them at once.
SELECT f.finding_key, f.check_name, f.currency, f.amount_minor, f.detail
FROM findings AS f
WHERE f.run_id = (SELECT run_id FROM runs WHERE loaded_at IS NOT NULL ORDER BY started_at DESC LIMIT 1)
  AND f.state IN ('new', 'open', 'reopened')
  AND starts_with(f.check_name, 'ledger_')
  AND ((f.entity = 'order' AND f.entity_id = $order)
       OR (f.entity = 'payment' AND list_contains($payments, f.entity_id)))
ORDER BY f.finding_key
