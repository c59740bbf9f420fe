-- name: open_invoices
-- description: Every open invoice, with its aging bucket (days past its due date, or since recon first saw it open when it has none; not yet due when the due date is ahead).
-- severity: info
-- requires: [invoices]
-- tolerates: [invoices]
-- finding_key: [entity_id]
-- tags: [invoices, aging]
-- # The bucket is the issue_type but not part of the finding's identity (finding_key): an
-- # invoice moving from 0-30 to 31-60 stays the same open finding. Buckets: aging_bucket()
-- # in sql/reference/aging.sql.
WITH aged AS (
    -- open_invoices_as_of(): sql/reference/aging.sql, also read by the analysts' view
    SELECT *, days_overdue AS age_days FROM open_invoices_as_of($as_of)
)
SELECT
    'invoice' AS entity,
    a.id AS entity_id,
    a.currency,
    a.amount_due_minor AS amount_minor,
    aging_bucket(a.age_days) AS issue_type,
    'open, ' || recon_money(a.amount_due_minor, a.currency) || ' due, '
        || CASE WHEN a.due_date IS NULL
                THEN 'no due date, open since ' || strftime(timezone('UTC', a.open_since), '%Y-%m-%d')
                     || ' (' || a.age_days || ' days)'
                WHEN a.age_days < 0
                THEN 'due date ' || strftime(a.due_date, '%Y-%m-%d') || ' (in ' || -a.age_days || ' days)'
                ELSE 'due date ' || strftime(a.due_date, '%Y-%m-%d') || ' (' || a.age_days || ' days ago)'
           END AS detail
FROM aged AS a
