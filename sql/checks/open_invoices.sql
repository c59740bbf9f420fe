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
WITH first_open AS (
    -- The night recon first saw each invoice open (from the version history).
    SELECT v.id, min(r.started_at) AS first_open_at
    FROM record_versions AS v
    JOIN runs AS r ON r.run_id = v.run_id
    WHERE v.entity = 'invoices' AND v.status = 'open'
    GROUP BY v.id
),
aged AS (
    SELECT
        i.id, i.currency, i.amount_due_minor, i.due_date,
        coalesce(f.first_open_at, fr.started_at, $as_of) AS open_since,
        CASE WHEN i.due_date IS NOT NULL
             THEN date_diff('day', i.due_date, CAST(timezone('UTC', $as_of) AS DATE))
             ELSE date_diff('day',
                            CAST(timezone('UTC', coalesce(f.first_open_at, fr.started_at, $as_of)) AS DATE),
                            CAST(timezone('UTC', $as_of) AS DATE))
        END AS age_days
    FROM invoices AS i
    LEFT JOIN first_open AS f ON f.id = i.id
    LEFT JOIN runs AS fr ON fr.run_id = i.first_seen_run
    WHERE i.gone_in_run IS NULL
      AND i.status = 'open'
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
