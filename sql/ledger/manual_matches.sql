-- The people's matches (temp table _manual: order_key, payment_id, order_amount, currency,
-- payment_amount, who, matched_at, note; one row per payment of the latest `match` line per
-- order of the audit trail) checked against tonight's books and live payments: applied, or
-- lapsed with the reason (a side gone or its amount changed). Parameter: $run_id.
INSERT INTO ledger_manual_matches BY NAME
WITH checked AS (
    SELECT m.*,
        CASE WHEN o.order_key IS NULL THEN 'order ' || m.order_key || ' is no longer in the books'
             WHEN o.amount_minor IS DISTINCT FROM m.order_amount
               OR o.currency IS DISTINCT FROM m.currency
             THEN 'order ' || m.order_key || ' changed its amount' END AS order_problem,
        CASE WHEN p.id IS NULL THEN 'payment ' || m.payment_id || ' is gone'
             WHEN p.amount_minor IS DISTINCT FROM m.payment_amount
             THEN 'payment ' || m.payment_id || ' changed its amount' END AS payment_problem
    FROM _manual AS m
    LEFT JOIN (SELECT coalesce(reference, order_id) AS order_key, amount_minor, currency
               FROM ledger_orders) AS o ON o.order_key = m.order_key
    LEFT JOIN payments AS p ON p.id = m.payment_id AND p.gone_in_run IS NULL
)
SELECT order_key, list(payment_id ORDER BY payment_id) AS payment_ids,
       any_value(who) AS who, any_value(matched_at) AS matched_at,
       any_value(note) AS note,
       CASE WHEN count(order_problem) + count(payment_problem) = 0 THEN 'applied'
            ELSE 'lapsed' END AS state,
       nullif(concat_ws('; ', any_value(order_problem),
                        string_agg(payment_problem, '; ' ORDER BY payment_id)), '') AS reason,
       $run_id AS run_id
FROM checked
GROUP BY order_key
