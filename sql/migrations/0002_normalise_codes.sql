-- Migration 0002: upgrades of warehouses written before migrations were numbered.
-- check_runs.coverage came after the first warehouses were written.
ALTER TABLE check_runs ADD COLUMN IF NOT EXISTS coverage VARCHAR;
-- Codes are normalised on load (currency upper case, status lower case); rows loaded before
-- that keep the value as sent until the record changes, so they are normalised here once.
UPDATE payments SET currency = upper(currency), status = lower(status)
WHERE currency <> upper(currency) OR status <> lower(status);
UPDATE refunds SET currency = upper(currency), status = lower(status)
WHERE currency <> upper(currency) OR status <> lower(status);
UPDATE disputes SET currency = upper(currency), status = lower(status)
WHERE currency <> upper(currency) OR status <> lower(status);
UPDATE invoices SET currency = upper(currency), status = lower(status)
WHERE currency <> upper(currency) OR status <> lower(status);
UPDATE payment_intents SET currency = upper(currency), status = lower(status)
WHERE currency <> upper(currency) OR status <> lower(status);
UPDATE subscriptions SET status = lower(status) WHERE status <> lower(status);
