-- Status changes that may happen between two nights (entity = table name). A change of
-- status not listed here is flagged by suspicious_changes (e.g. payments refunded → confirmed).
-- Several steps may happen between two runs, so each "from" lists every later state it can
-- reach, not only the next one. Idempotent: replaced on every run of the checks.
CREATE OR REPLACE TABLE status_transitions (
    entity      VARCHAR NOT NULL,
    from_status VARCHAR NOT NULL,
    to_status   VARCHAR NOT NULL,
    PRIMARY KEY (entity, from_status, to_status)
);
INSERT INTO status_transitions
SELECT entity, from_status, unnest(to_statuses) AS to_status
FROM (VALUES
    ('payments', 'created', ['pending', 'confirmed', 'partially_refunded', 'refunded', 'cancelled', 'expired']),
    ('payments', 'pending', ['confirmed', 'partially_refunded', 'refunded', 'cancelled', 'expired']),
    ('payments', 'confirmed', ['partially_refunded', 'refunded']),
    ('payments', 'partially_refunded', ['refunded']),
    ('refunds', 'pending', ['succeeded', 'failed', 'canceled', 'cancelled', 'rejected', 'reversed']),
    ('refunds', 'succeeded', ['reversed']),
    ('payment_intents', 'requires_payment_method', ['requires_action', 'requires_capture', 'processing', 'succeeded', 'cancelled']),
    ('payment_intents', 'requires_action', ['requires_payment_method', 'requires_capture', 'processing', 'succeeded', 'cancelled']),
    ('payment_intents', 'requires_capture', ['processing', 'succeeded', 'cancelled']),
    ('payment_intents', 'processing', ['requires_payment_method', 'requires_action', 'requires_capture', 'succeeded', 'cancelled']),
    ('subscriptions', 'incomplete', ['active', 'trialing', 'past_due', 'incomplete_expired', 'canceled', 'cancelled']),
    ('subscriptions', 'trialing', ['active', 'past_due', 'unpaid', 'paused', 'canceled', 'cancelled']),
    ('subscriptions', 'active', ['past_due', 'unpaid', 'paused', 'canceled', 'cancelled']),
    ('subscriptions', 'past_due', ['active', 'unpaid', 'paused', 'canceled', 'cancelled']),
    ('subscriptions', 'unpaid', ['active', 'past_due', 'paused', 'canceled', 'cancelled']),
    ('subscriptions', 'paused', ['active', 'trialing', 'past_due', 'canceled', 'cancelled']),
    ('invoices', 'draft', ['open', 'paid', 'void', 'uncollectible']),
    ('invoices', 'open', ['paid', 'void', 'uncollectible']),
    ('invoices', 'uncollectible', ['paid', 'void']),
    ('disputes', 'warning_needs_response', ['warning_under_review', 'warning_closed', 'needs_response', 'under_review', 'won', 'lost']),
    ('disputes', 'warning_under_review', ['warning_closed', 'needs_response', 'under_review', 'won', 'lost']),
    ('disputes', 'needs_response', ['under_review', 'won', 'lost']),
    ('disputes', 'under_review', ['won', 'lost'])
) AS t(entity, from_status, to_statuses);
