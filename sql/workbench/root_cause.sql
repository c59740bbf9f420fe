-- A finding's root cause, read from what its row holds: its check and its issue_type (the
-- last part of its key). The queue groups by it and filters on it (recon.workbench.queue
-- defines this macro on every connection it reads with; docs/workbench.md has the table).
-- A check this list does not name is `other`: adding a check never needs this file, and an
-- unnamed one is never put under a cause it may not have.
--   counterpart_missing  one side has it, the other has not (books, provider, bank)
--   amount_differs       both sides have it; the amounts disagree
--   currency_differs     both sides have it; the currencies disagree
--   status_differs       the states disagree, or a state the other side forbids
--   needs_a_match        candidates exist but none is picked (ambiguous, suggested, lapsed)
--   duplicate            the same charge or reference more than once
--   in_flight            not settled yet: pending, stuck, refunds in flight, open invoices
--   bad_data             the data itself is impossible, unreadable, missing or anomalous
CREATE OR REPLACE TEMP MACRO recon_root_cause(check_name, issue_type) AS CASE
    WHEN check_name = 'ledger_order_missing_at_provider' AND issue_type = 'not_settled'
        THEN 'status_differs'
    WHEN check_name = 'ledger_invoice_mismatch' AND issue_type = 'amount_mismatch'
        THEN 'amount_differs'
    WHEN check_name = 'ledger_refund_mismatch' AND issue_type = 'amount_mismatch'
        THEN 'amount_differs'
    WHEN check_name = 'ledger_refund_mismatch' THEN 'status_differs'  -- failed_at_provider
    WHEN check_name = 'ledger_refund_unmatched' AND issue_type = 'currency_mismatch'
        THEN 'currency_differs'
    WHEN check_name = 'ledger_refund_unmatched' AND issue_type = 'ambiguous_reference'
        THEN 'needs_a_match'
    WHEN check_name = 'ledger_refund_status' AND issue_type = 'books_over_refunded'
        THEN 'amount_differs'
    WHEN check_name = 'bank_settlement_missing' AND issue_type = 'ambiguous'
        THEN 'needs_a_match'
    WHEN check_name IN (
        'ledger_order_missing_at_provider', 'ledger_payment_missing_from_books',
        'ledger_refund_missing_at_provider', 'ledger_refund_missing_from_books',
        'ledger_invoice_mismatch', 'ledger_refund_unmatched', 'bank_settlement_missing',
        'bank_unexpected_credit', 'refund_unknown_payment'
    ) THEN 'counterpart_missing'
    WHEN check_name IN (
        'ledger_amount_mismatch', 'ledger_matched_within_tolerance',
        'bank_settlement_amount_mismatch', 'refunded_amount_mismatch',
        'partially_refunded_out_of_range', 'over_refunded'
    ) THEN 'amount_differs'
    WHEN check_name IN ('ledger_currency_mismatch', 'refund_currency_mismatch')
        THEN 'currency_differs'
    WHEN check_name IN (
        'ledger_status_mismatch', 'ledger_refund_status', 'confirmed_with_refunds',
        'refund_on_unrefundable_payment', 'dispute_on_refunded_payment', 'suspicious_changes',
        'unknown_status', 'open_invoice_inactive_subscription'
    ) THEN 'status_differs'
    WHEN check_name IN ('ledger_suggested_match', 'ledger_manual_match_lapsed')
        THEN 'needs_a_match'
    WHEN check_name IN ('ledger_duplicate_charge', 'duplicate_payment_reference')
        THEN 'duplicate'
    WHEN check_name IN ('ledger_pending', 'refund_in_flight', 'stuck_non_final', 'open_invoices')
        THEN 'in_flight'
    WHEN check_name IN (
        'impossible_amounts', 'intent_negative_amount', 'open_invoice_nonpositive_amount',
        'unreadable_timestamps', 'vanished_records', 'extraction_completeness',
        'volume_anomaly', 'bank_statement_gap'
    ) THEN 'bad_data'
    ELSE 'other'
END
