-- The $top_n largest unresolved findings of one check and currency (recon.report.data);
-- `$currency` NULL is the group of findings without a currency. ORDER BY … LIMIT is
-- DuckDB's Top-N: memory bounded by $top_n rows, whatever the number of findings.
SELECT check_name, severity, state, entity, entity_id, currency, amount_minor,
       issue_type, detail, first_seen_run, finding_key
FROM findings
WHERE run_id = $run_id AND state <> 'resolved' AND check_name = $check_name
  AND currency IS NOT DISTINCT FROM $currency
ORDER BY abs(amount_minor::HUGEINT) DESC NULLS LAST, entity_id, issue_type
LIMIT $top_n
