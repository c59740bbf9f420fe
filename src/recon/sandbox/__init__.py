"""A local stand-in for the Merchant Payments API (see docs/sandbox.md)."""
