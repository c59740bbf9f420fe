-- name: open_invoices
-- description: Every open invoice, with its aging bucket (days past its due date, or since recon first saw it open when it has none).
-- severity: info
-- requires: [invoices]
-- tags: [invoices, aging]
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
    CASE WHEN a.age_days <= 30 THEN '0-30'
         WHEN a.age_days <= 60 THEN '31-60'
         WHEN a.age_days <= 90 THEN '61-90'
         ELSE '90+' END AS issue_type,
    'open, ' || recon_money(a.amount_due_minor, a.currency) || ' due, '
        || CASE WHEN a.due_date IS NOT NULL
                THEN 'due date ' || strftime(a.due_date, '%Y-%m-%d') || ' (' || a.age_days || ' days ago)'
                ELSE 'no due date, open since ' || strftime(timezone('UTC', a.open_since), '%Y-%m-%d')
                     || ' (' || a.age_days || ' days)' END AS detail
FROM aged AS a
