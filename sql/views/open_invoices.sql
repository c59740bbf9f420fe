-- open_invoices: every live open invoice with its aging bucket, as of the latest run's start
-- (the warehouse's point in time, so a query gives the same answer tomorrow). Days are past
-- the due date; an invoice without one is aged from the night recon first saw it open, as
-- the open_invoices check does. Buckets: aging_bucket() in sql/reference/aging.sql
-- ('not yet due', '0-30', '31-60', '61-90', '90+').
CREATE OR REPLACE VIEW open_invoices AS
WITH as_of AS (
    SELECT max(started_at) AS as_of FROM runs
),
first_open AS (
    SELECT v.id, min(r.started_at) AS first_open_at
    FROM record_versions AS v
    JOIN runs AS r ON r.run_id = v.run_id
    WHERE v.entity = 'invoices' AND v.status = 'open'
    GROUP BY v.id
),
aged AS (
    SELECT
        i.*,
        coalesce(f.first_open_at, fr.started_at, a.as_of) AS open_since,
        a.as_of,
        date_diff('day',
                  coalesce(i.due_date, CAST(timezone('UTC', coalesce(f.first_open_at, fr.started_at, a.as_of)) AS DATE)),
                  CAST(timezone('UTC', a.as_of) AS DATE)) AS days_overdue
    FROM invoices AS i
    CROSS JOIN as_of AS a
    LEFT JOIN first_open AS f ON f.id = i.id
    LEFT JOIN runs AS fr ON fr.run_id = i.first_seen_run
    WHERE i.gone_in_run IS NULL AND i.status = 'open'
)
SELECT
    id, customer_id, subscription_id, currency, amount_due_minor,
    money(amount_due_minor, currency) AS amount_due,
    due_date, open_since, days_overdue, aging_bucket(days_overdue) AS aging_bucket, as_of
FROM aged;
