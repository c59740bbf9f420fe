-- The one definition of an open invoice's aging bucket, from the days it is past its due
-- date (negative: not due yet). open_invoices uses it, and so do analysts' views:
--   aging_bucket(-3) = 'not yet due'; aging_bucket(0) = '0-30'; aging_bucket(31) = '31-60';
--   aging_bucket(61) = '61-90'; aging_bucket(91) = '90+'; aging_bucket(NULL) = NULL
CREATE OR REPLACE MACRO aging_bucket(days_overdue) AS
    CASE
        WHEN days_overdue IS NULL THEN NULL
        WHEN days_overdue < 0 THEN 'not yet due'
        WHEN days_overdue <= 30 THEN '0-30'
        WHEN days_overdue <= 60 THEN '31-60'
        WHEN days_overdue <= 90 THEN '61-90'
        ELSE '90+'
    END;

-- Every live open invoice as of `as_of`, with the days it is past its due date (negative:
-- not due yet); an invoice without a due date is aged from the night recon first saw it
-- open (from the version history). The open_invoices check and the analysts' open_invoices
-- view both read it:  SELECT * FROM open_invoices_as_of(TIMESTAMPTZ '2026-11-23 02:00:00+00')
CREATE OR REPLACE MACRO open_invoices_as_of(as_of) AS TABLE
    WITH first_open AS (
        SELECT v.id, min(r.started_at) AS first_open_at
        FROM record_versions AS v
        JOIN runs AS r ON r.run_id = v.run_id
        WHERE v.entity = 'invoices' AND v.status = 'open'
        GROUP BY v.id
    ),
    aged AS (
        SELECT
            i.id, i.customer_id, i.subscription_id, i.currency, i.amount_due_minor, i.due_date,
            coalesce(f.first_open_at, fr.started_at, as_of) AS open_since
        FROM invoices AS i
        LEFT JOIN first_open AS f ON f.id = i.id
        LEFT JOIN runs AS fr ON fr.run_id = i.first_seen_run
        WHERE i.gone_in_run IS NULL AND i.status = 'open'
    )
    SELECT
        *,
        date_diff('day',
                  coalesce(due_date, CAST(timezone('UTC', open_since) AS DATE)),
                  CAST(timezone('UTC', as_of) AS DATE)) AS days_overdue
    FROM aged;
