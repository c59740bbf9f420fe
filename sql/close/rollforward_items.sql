-- The roll-forward of a period per finding: every unresolved finding of the opening run
-- (step 0) and of each run of the period (steps 1..$last_step), as `close_steps`
-- (run_id, step) says. Between two consecutive steps a finding opens (new), resolves, or
-- stays open and its amount moves (change); a finding whose currency changed resolves in
-- the old currency and opens in the new one. For every finding and currency:
--     open_start + new - resolved + change = open_end   (amounts; counts without change)
-- family: the check's first tag (`close_families`, from the check definitions).
-- A finding's rows depend on its own nights only: recon.close.period runs this for one part
-- of the findings at a time ($part of $parts, by the hash of the key; a window over a
-- million findings of every night ran out of a command's 64 MiB, issue 38) and orders the
-- rows when it spools them (family, currency, check, key).
WITH open_rows AS (
    SELECT f.finding_key, f.check_name, f.entity_id, f.currency,
           coalesce(f.amount_minor, 0) AS amount_minor, s.step
    FROM findings AS f JOIN close_steps AS s USING (run_id)
    WHERE f.state IN ('new', 'open', 'reopened') AND hash(f.finding_key) % $parts = $part
),
linked AS (
    SELECT *,
           lag(step) OVER w AS prev_step, lag(currency) OVER w AS prev_currency,
           lag(amount_minor) OVER w AS prev_amount,
           lead(step) OVER w AS next_step, lead(currency) OVER w AS next_currency
    FROM open_rows
    WINDOW w AS (PARTITION BY finding_key ORDER BY step)
),
moves AS (
    SELECT *,
           prev_step = step - 1 AND prev_currency IS NOT DISTINCT FROM currency AS continues,
           (next_step IS NULL AND step < $last_step) OR next_step > step + 1
               OR (next_step = step + 1 AND next_currency IS DISTINCT FROM currency) AS ends
    FROM linked
)
SELECT
    coalesce(fam.family, 'other') AS family, m.check_name, m.currency, m.finding_key,
    any_value(m.entity_id) AS entity_id,
    CAST(count(*) FILTER (WHERE m.step = 0) AS INTEGER) AS open_start_count,
    CAST(coalesce(sum(m.amount_minor) FILTER (WHERE m.step = 0), 0) AS BIGINT) AS open_start_minor,
    CAST(count(*) FILTER (WHERE m.step > 0 AND NOT coalesce(m.continues, false)) AS INTEGER) AS new_count,
    CAST(coalesce(sum(m.amount_minor) FILTER (WHERE m.step > 0 AND NOT coalesce(m.continues, false)), 0) AS BIGINT) AS new_minor,
    CAST(count(*) FILTER (WHERE m.ends) AS INTEGER) AS resolved_count,
    CAST(coalesce(sum(m.amount_minor) FILTER (WHERE m.ends), 0) AS BIGINT) AS resolved_minor,
    CAST(coalesce(sum(m.amount_minor - m.prev_amount) FILTER (WHERE m.step > 0 AND m.continues), 0) AS BIGINT) AS change_minor,
    CAST(count(*) FILTER (WHERE m.step = $last_step) AS INTEGER) AS open_end_count,
    CAST(coalesce(sum(m.amount_minor) FILTER (WHERE m.step = $last_step), 0) AS BIGINT) AS open_end_minor
FROM moves AS m
LEFT JOIN close_families AS fam USING (check_name)
GROUP BY ALL
