-- The best candidates proposed for a books order (ledger_suggestions), with their score and
-- why, and the payment's own amount and date.
SELECT s.payment_id, s.score, s.reasons, s.candidates, s.rivals,
       p.amount_minor, p.currency, p.status, p.reference, p.created_at
FROM ledger_suggestions AS s
LEFT JOIN payments AS p ON p.id = s.payment_id
WHERE s.order_key = $order
ORDER BY s.score DESC, s.payment_id
LIMIT 20
