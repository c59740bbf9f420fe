-- The consolidated warehouse's own table (recon.warehouse.consolidated): every account and the
-- published warehouse it attaches; filled by the build, one row an account.
CREATE TABLE recon_accounts (account VARCHAR, path VARCHAR);
COMMENT ON TABLE recon_accounts IS 'Each account of [accounts] in recon.toml and its published warehouse (relative to this file when below its folder).';
COMMENT ON COLUMN recon_accounts.account IS 'The account''s name.';
COMMENT ON COLUMN recon_accounts.path IS 'Its published warehouse, attached read-only as acct_<account> by recon query and recon export.';
