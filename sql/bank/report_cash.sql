-- The report's and the close pack's Cash section (recon.bank.cash), per currency, minor
-- units: expected settlements (due on a day the statements cover), what arrived for them,
-- what is in transit or missing, what could not be judged, and the differences.
-- expected = (received - differences) + in_transit + missing + not_judged.
WITH s AS (
    SELECT * FROM bank_settlements WHERE net_minor > 0 AND state <> 'not_covered'
), lines AS (
    SELECT currency,
           count(*) FILTER (WHERE match_state = 'unexpected') AS unexpected,
           sum(amount_minor) FILTER (WHERE match_state = 'unexpected') AS unexpected_minor
    FROM bank_lines GROUP BY currency
), gaps AS (
    SELECT currency, count(DISTINCT first_missing) AS gaps FROM bank_gaps GROUP BY currency
), covered AS (
    SELECT currency, min(first_date) AS first_date, max(last_date) AS last_date
    FROM bank_statements GROUP BY currency
)
SELECT c.currency,
       c.first_date,
       c.last_date,
       CAST(count(s.settlement_id) AS BIGINT) AS settlements,
       CAST(coalesce(sum(s.net_minor), 0) AS BIGINT) AS expected,
       CAST(coalesce(sum(s.received_minor) FILTER (WHERE s.state IN ('received', 'mismatch')), 0) AS BIGINT) AS received,
       CAST(coalesce(sum(s.difference_minor) FILTER (WHERE s.state IN ('received', 'mismatch')), 0) AS BIGINT) AS differences,
       CAST(coalesce(sum(s.net_minor) FILTER (WHERE s.state = 'in_transit'), 0) AS BIGINT) AS in_transit,
       CAST(coalesce(sum(s.net_minor) FILTER (WHERE s.state = 'missing'), 0) AS BIGINT) AS missing,
       CAST(coalesce(sum(s.net_minor) FILTER (WHERE s.state IN ('not_evaluated', 'ambiguous')), 0) AS BIGINT) AS not_judged,
       CAST(count(*) FILTER (WHERE s.state = 'mismatch') AS BIGINT) AS mismatches,
       CAST(count(*) FILTER (WHERE s.state = 'missing') AS BIGINT) AS missing_count,
       CAST(coalesce(any_value(l.unexpected), 0) AS BIGINT) AS unexpected,
       CAST(coalesce(any_value(l.unexpected_minor), 0) AS BIGINT) AS unexpected_minor,
       CAST(coalesce(any_value(g.gaps), 0) AS BIGINT) AS gaps
FROM covered AS c
LEFT JOIN s ON s.currency = c.currency
LEFT JOIN lines AS l ON l.currency = c.currency
LEFT JOIN gaps AS g ON g.currency = c.currency
GROUP BY c.currency, c.first_date, c.last_date
ORDER BY c.currency
