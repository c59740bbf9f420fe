-- name: ledger_suggested_match
-- description: "A books order no rule matched, with a proposed counterpart: an unmatched settled payment in its currency, the amount within the tolerance, dates within RECON_LEDGER_DATE_WINDOW_DAYS. When several candidates are equally good (or the payment is the best of several orders) it is ambiguous and every candidate is listed; accept one with `recon match`."
-- severity: warn
-- requires: [payments, ledger_orders]
-- tags: [ledger, matching]
WITH best AS (
    SELECT s.order_key,
           count(*) AS n,
           max(s.rivals) AS rivals,
           any_value(s.score) AS score,
           string_agg(s.payment_id || ' ' || recon_money(p.amount_minor, p.currency)
                      || ' on ' || strftime(timezone('UTC', p.created_at), '%Y-%m-%d')
                      || coalesce(' ref ' || p.reference, ' no reference'), ', ' ORDER BY s.payment_id) AS candidates,
           any_value(s.reasons) AS reasons
    FROM ledger_suggestions AS s
    JOIN payments AS p ON p.id = s.payment_id
    GROUP BY s.order_key
)
SELECT
    'order' AS entity,
    b.order_key AS entity_id,
    o.currency,
    o.amount_minor,
    CASE WHEN b.n = 1 AND b.rivals = 1 THEN 'suggested' ELSE 'ambiguous' END AS issue_type,
    'books ' || recon_money(o.amount_minor, o.currency) || ' on '
        || strftime(timezone('UTC', o.created_at), '%Y-%m-%d')
        || coalesce(' ref ' || o.reference, ' no reference') || '; '
        || CASE WHEN b.n = 1 AND b.rivals = 1
                THEN 'candidate ' || b.candidates || ' (score ' || b.score || ': ' || b.reasons || ')'
                WHEN b.n > 1
                THEN 'ambiguous: ' || b.n || ' candidates at score ' || b.score || ', none proposed: ' || b.candidates
                ELSE 'ambiguous: the candidate ' || b.candidates || ' is as good a match for '
                     || b.rivals || ' orders, none proposed' END AS detail
FROM best AS b
JOIN ledger_orders AS o ON coalesce(o.reference, o.order_id) = b.order_key
