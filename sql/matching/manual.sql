-- name: manual
-- description: A person's match (`recon match ORDER PAYMENT… --note`), from the audit trail, while both sides still exist with the amounts they had when matched.
-- priority: 0
-- cardinality: 1:N
-- claims: unmatched
-- parameters: []
SELECT order_key, payment_id FROM match_manual
