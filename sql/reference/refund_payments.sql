-- Each live refund beside its payment when that payment is live (payment columns NULL when
-- it is not): the one refund-to-payment join that the refund checks share.
-- recon.checks materializes it once per run as a TEMP table of the same name, which shadows
-- this view for the checks; an analyst who pastes a check reads the view, with the same rows.
-- Failure statuses are applied by each check (`$failed_statuses`), not here.
CREATE OR REPLACE VIEW refund_payments AS
SELECT
    r.id,
    r.payment_id,
    r.amount_minor,
    r.currency,
    r.status,
    r.created_at,
    p.id AS live_payment_id,
    p.status AS payment_status,
    p.currency AS payment_currency,
    p.amount_minor AS payment_amount_minor
FROM refunds AS r
LEFT JOIN payments AS p ON p.id = r.payment_id AND p.gone_in_run IS NULL
WHERE r.gone_in_run IS NULL;
