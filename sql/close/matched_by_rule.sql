-- Matches of the period's orders by the rule that made them: ledger_matches.rule where the
-- matching records it, else every match counts as rule `exact` ({rule} is replaced by
-- recon.close with `m.rule` or `'exact'`, nothing else).
SELECT
    {rule} AS rule, o.currency,
    CAST(count(*) AS BIGINT) AS matches,
    CAST(sum(o.amount_minor) AS BIGINT) AS amount_minor
FROM ledger_orders AS o
JOIN ledger_matches AS m ON m.entity = 'order' AND m.entity_id = o.reference
WHERE m.state = 'matched' AND o.created_at >= $period_start AND o.created_at < $period_end
GROUP BY ALL
ORDER BY rule, o.currency
