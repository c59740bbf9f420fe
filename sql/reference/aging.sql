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
