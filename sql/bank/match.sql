-- Each expected settlement against the provider's credits (docs/bank.md). Same currency,
-- value date from $grace_days business days before the pay date to the deadline:
--   1. amount within the tolerance, one candidate each way: received;
--   2. what is left: a credit on the pay date, else within the window, one each way:
--      mismatch (found, amount differs);
--   ties in either pass are ambiguous: every candidate listed, none picked.
-- Unfound: not_covered (due before the statements begin, or no statement in the currency),
-- not_evaluated (its window overlaps a gap), in_transit (its deadline is after the last
-- statement), else missing. A provider credit that is nobody's candidate is unexpected.
-- Reads: temp.bank_expected, bank_lines, bank_statements, bank_gaps.
-- Writes: bank_settlements, bank_lines.settlement_id / match_state.
CREATE OR REPLACE TEMP TABLE bank_credits AS
SELECT file_name || ':' || line_no AS credit, file_name, line_no, currency, value_date, amount_minor
FROM bank_lines
WHERE is_provider AND amount_minor > 0;
CREATE OR REPLACE TEMP TABLE bank_due AS
SELECT * FROM temp.bank_expected WHERE net_minor > 0;
CREATE OR REPLACE TEMP TABLE bank_cand AS
SELECT e.settlement_id, c.credit,
       count(*) OVER (PARTITION BY e.settlement_id) AS n_s,
       count(*) OVER (PARTITION BY c.credit) AS n_c
FROM temp.bank_due AS e
JOIN temp.bank_credits AS c
    ON c.currency = e.currency
   AND c.value_date BETWEEN coalesce(e.window_from, e.pay_date) AND e.deadline
   AND abs(c.amount_minor - e.net_minor) <= e.tolerance_minor;
CREATE OR REPLACE TEMP TABLE bank_pairs AS
SELECT settlement_id, credit, 'received' AS state FROM temp.bank_cand WHERE n_s = 1 AND n_c = 1;
CREATE OR REPLACE TEMP TABLE bank_cand2 AS
SELECT e.settlement_id, c.credit, c.value_date = e.pay_date AS on_day
FROM temp.bank_due AS e
JOIN temp.bank_credits AS c
    ON c.currency = e.currency
   AND c.value_date BETWEEN coalesce(e.window_from, e.pay_date) AND e.deadline
WHERE e.settlement_id NOT IN (SELECT settlement_id FROM temp.bank_cand)
  AND c.credit NOT IN (SELECT credit FROM temp.bank_cand);
INSERT INTO temp.bank_pairs
SELECT settlement_id, credit, 'mismatch'
FROM (SELECT *, count(*) OVER (PARTITION BY settlement_id) AS n_s,
             count(*) OVER (PARTITION BY credit) AS n_c
      FROM temp.bank_cand2 WHERE on_day)
WHERE n_s = 1 AND n_c = 1;
INSERT INTO temp.bank_pairs
SELECT settlement_id, credit, 'mismatch'
FROM (SELECT *, count(*) OVER (PARTITION BY settlement_id) AS n_s,
             count(*) OVER (PARTITION BY credit) AS n_c
      FROM temp.bank_cand2
      WHERE settlement_id NOT IN (SELECT settlement_id FROM temp.bank_pairs)
        AND credit NOT IN (SELECT credit FROM temp.bank_pairs))
WHERE n_s = 1 AND n_c = 1;
CREATE OR REPLACE TEMP TABLE bank_ties AS
SELECT t.settlement_id,
       string_agg(t.credit || ' ' || c.amount_minor || ' on ' || strftime(c.value_date, '%Y-%m-%d'),
                  ', ' ORDER BY t.credit) AS candidates
FROM (SELECT settlement_id, credit FROM temp.bank_cand
      UNION SELECT settlement_id, credit FROM temp.bank_cand2) AS t
JOIN temp.bank_credits AS c ON c.credit = t.credit
WHERE t.settlement_id NOT IN (SELECT settlement_id FROM temp.bank_pairs)
  AND t.credit NOT IN (SELECT credit FROM temp.bank_pairs)
GROUP BY t.settlement_id;
DELETE FROM bank_settlements;
INSERT INTO bank_settlements BY NAME
WITH coverage AS (
    SELECT currency, min(first_date) AS first_date, max(last_date) AS last_date
    FROM bank_statements GROUP BY currency
)
SELECT e.settlement_id, e.currency, e.business_day, e.payments, e.gross_minor, e.refunds,
       e.refunds_minor, e.fees_minor, e.net_minor, e.tolerance_minor, e.pay_date, e.deadline,
       CASE WHEN e.net_minor <= 0 THEN 'nothing_due'
            WHEN p.state IS NOT NULL THEN p.state
            WHEN t.settlement_id IS NOT NULL THEN 'ambiguous'
            WHEN v.currency IS NULL OR e.pay_date < v.first_date THEN 'not_covered'
            WHEN EXISTS (SELECT 1 FROM bank_gaps AS g
                         WHERE g.currency = e.currency
                           AND g.span_from <= e.deadline AND g.span_to >= e.pay_date)
                 THEN 'not_evaluated'
            WHEN e.deadline > v.last_date THEN 'in_transit'
            ELSE 'missing' END AS state,
       CASE WHEN e.net_minor <= 0 THEN 'refunds and fees exceed the payments: nothing to credit'
            WHEN p.state IS NOT NULL OR t.settlement_id IS NOT NULL THEN NULL
            WHEN v.currency IS NULL THEN 'no statement in ' || e.currency
            WHEN e.pay_date < v.first_date
                 THEN 'due ' || strftime(e.pay_date, '%Y-%m-%d') || ', before the statements begin ('
                      || strftime(v.first_date, '%Y-%m-%d') || ')'
            WHEN e.deadline > v.last_date
                 THEN 'due ' || strftime(e.pay_date, '%Y-%m-%d') || ', late after '
                      || strftime(e.deadline, '%Y-%m-%d') || '; statements end '
                      || strftime(v.last_date, '%Y-%m-%d')
            END AS reason,
       p.credit, c.value_date, c.amount_minor AS received_minor,
       c.amount_minor - e.net_minor AS difference_minor,
       t.candidates,
       $run_id AS run_id
FROM temp.bank_expected AS e
LEFT JOIN temp.bank_pairs AS p ON p.settlement_id = e.settlement_id
LEFT JOIN temp.bank_credits AS c ON c.credit = p.credit
LEFT JOIN temp.bank_ties AS t ON t.settlement_id = e.settlement_id
LEFT JOIN coverage AS v ON v.currency = e.currency;
UPDATE bank_lines AS l
SET settlement_id = p.settlement_id, match_state = p.state
FROM temp.bank_pairs AS p
WHERE p.credit = l.file_name || ':' || l.line_no;
UPDATE bank_lines AS l
SET match_state = CASE WHEN l.file_name || ':' || l.line_no IN (
                           SELECT credit FROM (SELECT settlement_id, credit FROM temp.bank_cand
                                               UNION SELECT settlement_id, credit FROM temp.bank_cand2)
                           WHERE settlement_id NOT IN (SELECT settlement_id FROM temp.bank_pairs))
                       THEN 'candidate' ELSE 'unexpected' END
WHERE l.is_provider AND l.amount_minor > 0 AND l.match_state IS NULL;
