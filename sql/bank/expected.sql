-- The expected settlements (docs/bank.md): per currency C and business day D, the settled
-- payments created on D (UTC; a weekend or holiday belongs to the next business day) minus
-- the counted refunds created on D in C, minus the fees of the settled payments:
-- round-half-even(amount x fee_bps / 10,000) + fee_fixed_minor each, in integers.
-- Paid $settlement_days business days after D; missing after $grace_days more.
-- Reads: payments, refunds, bank_days, temp.bank_fees. Writes: temp.bank_expected.
CREATE OR REPLACE TEMP MACRO bank_half_even(n, d) AS
    sign(n) * (abs(n) // d + CASE WHEN 2 * (abs(n) % d) > d
                                    OR (2 * (abs(n) % d) = d AND (abs(n) // d) % 2 = 1)
                                  THEN 1 ELSE 0 END);
CREATE OR REPLACE TEMP TABLE bank_expected AS
WITH pay AS (
    SELECT upper(trim(p.currency)) AS currency,
           d.business_day,
           count(*) AS payments,
           sum(p.amount_minor) AS gross,
           sum(bank_half_even(CAST(p.amount_minor AS HUGEINT) * coalesce(f.fee_bps, 0), 10000)
               + coalesce(f.fee_fixed_minor, 0)) AS fees
    FROM payments AS p
    JOIN bank_days AS d ON d.day = CAST(timezone('UTC', p.created_at) AS DATE)
    LEFT JOIN temp.bank_fees AS f ON f.currency = upper(trim(p.currency))
    WHERE p.gone_in_run IS NULL AND p.amount_minor IS NOT NULL AND p.currency IS NOT NULL
      AND list_contains($settled_statuses, lower(p.status))
    GROUP BY ALL
), ref AS (
    SELECT upper(trim(r.currency)) AS currency,
           d.business_day,
           count(*) AS refunds,
           sum(r.amount_minor) AS refunded
    FROM refunds AS r
    JOIN bank_days AS d ON d.day = CAST(timezone('UTC', r.created_at) AS DATE)
    WHERE r.gone_in_run IS NULL AND r.amount_minor IS NOT NULL AND r.currency IS NOT NULL
      AND NOT list_contains($failed_statuses, lower(coalesce(r.status, '')))
    GROUP BY ALL
), day AS (
    SELECT coalesce(p.currency, r.currency) AS currency,
           coalesce(p.business_day, r.business_day) AS business_day,
           coalesce(p.payments, 0) AS payments,
           CAST(coalesce(p.gross, 0) AS BIGINT) AS gross_minor,
           coalesce(r.refunds, 0) AS refunds,
           CAST(coalesce(r.refunded, 0) AS BIGINT) AS refunds_minor,
           CASE WHEN $fees_known THEN CAST(coalesce(p.fees, 0) AS BIGINT) END AS fees_minor
    FROM pay AS p
    FULL OUTER JOIN ref AS r ON r.currency = p.currency AND r.business_day = p.business_day
)
SELECT day.currency || ':' || strftime(day.business_day, '%Y-%m-%d') AS settlement_id,
       day.*,
       gross_minor - refunds_minor - coalesce(fees_minor, 0) AS net_minor,
       CAST($tolerance_minor + CASE WHEN $fees_known THEN 0
            ELSE bank_half_even(CAST(greatest(gross_minor, 0) AS HUGEINT) * $tolerance_bps, 10000) END
            AS BIGINT) AS tolerance_minor,
       pay.day AS pay_date,
       late.day AS deadline,
       early.day AS window_from
FROM day
JOIN bank_days AS b ON b.day = day.business_day
JOIN bank_days AS pay ON pay.business AND pay.bday_no = b.bday_no + $settlement_days
JOIN bank_days AS late ON late.business AND late.bday_no = b.bday_no + $settlement_days + $grace_days
LEFT JOIN bank_days AS early
    ON early.business AND early.bday_no = greatest(b.bday_no + $settlement_days - $grace_days, 1);
