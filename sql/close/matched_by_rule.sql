-- Matches of the period's orders by the rule that made them (ledger_matches.rule, migration
-- 0200); a match made before the rules were recorded was an exact reference match.
SELECT
    coalesce(m.rule, 'exact_reference') AS rule, o.currency,
    CAST(count(*) AS BIGINT) AS matches,
    CAST(sum(o.amount_minor) AS BIGINT) AS amount_minor
FROM ledger_orders AS o
JOIN ledger_matches AS m ON m.entity = 'order' AND m.entity_id = o.reference
WHERE m.state = 'matched' AND o.created_at >= $period_start AND o.created_at < $period_end
GROUP BY ALL
ORDER BY rule, o.currency
