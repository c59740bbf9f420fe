-- open_invoices: every live open invoice with its aging bucket, as of the latest run's start
-- (the warehouse's point in time, so a query gives the same answer tomorrow). Days are past
-- the due date; an invoice without one is aged from the night recon first saw it open, as
-- the open_invoices check does (both read open_invoices_as_of(), sql/reference/aging.sql).
-- Buckets: aging_bucket()
-- ('not yet due', '0-30', '31-60', '61-90', '90+').
CREATE OR REPLACE VIEW open_invoices AS
WITH as_of AS (
    SELECT max(started_at) AS as_of FROM runs
)
SELECT
    o.id, o.customer_id, o.subscription_id, o.currency, o.amount_due_minor,
    money(o.amount_due_minor, o.currency) AS amount_due,
    o.due_date, o.open_since, o.days_overdue, aging_bucket(o.days_overdue) AS aging_bucket,
    a.as_of
FROM as_of AS a, open_invoices_as_of(a.as_of) AS o;
