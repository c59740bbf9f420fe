-- name: intent_negative_amount
-- description: A payment intent whose integer amount is below zero.
-- severity: error
-- requires: [payment_intents]
-- tolerates: [payment_intents]
-- requires_fields: [payment_intents.amount]
-- tags: [amounts, payment_intents]
SELECT
    'payment_intent' AS entity,
    pi.id AS entity_id,
    pi.currency,
    pi.amount_minor,
    'negative_amount' AS issue_type,
    'payment intent (' || coalesce(pi.status, 'no status') || ') with amount '
        || recon_money(pi.amount_minor, pi.currency) AS detail
FROM payment_intents AS pi
WHERE pi.gone_in_run IS NULL
  AND pi.amount_minor < 0
