"""The analysts' tests read the shared warehouse `analyst_db` (tests/conftest.py): two nights
of `recon nightly` against the sandbox (600 payments, its books too), built once."""
