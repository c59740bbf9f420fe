"""The merchant's books against the provider: two-sided reconciliation (docs/ledger.md).

    recon.config.books             the `[ledger.*]` mapping of recon.toml (beside
    recon.config.settings,
                            which reads it)
    recon.ledger.sources    where each books table comes from; reading it as text
    recon.ledger.loading    validate_books (preflight), load_books (load step + matching)

The matching itself is SQL: `sql/ledger/classify_*.sql`, `sql/ledger/matches.sql` and the
`sql/checks/ledger_*.sql` checks. This package imports nothing at import time.
"""
