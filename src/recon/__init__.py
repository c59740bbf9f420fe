"""recon: nightly reconciliation of the Merchant Payments API into DuckDB."""

__version__ = "0.1.0"
