"""The bank leg: did the money the provider owes reach the bank? (docs/bank.md)

    recon.config.bank       the `[bank]` table of recon.toml (beside recon.config.settings, which
                            reads it)
    recon.bank.statements   one statement file (CAMT.053, MT940, BAI2, CSV) read into
                            `Statement`s and `Line`s, the format recognised from the content
    recon.bank.calendar     business days (weekends, holidays of `calendar`)
    recon.bank.loading      validate_bank (preflight), load_bank (the load step)

The settlement arithmetic and the matching are SQL: `sql/bank/*.sql` and the
`sql/checks/bank_*.sql` checks. This package imports nothing at import time.
"""
