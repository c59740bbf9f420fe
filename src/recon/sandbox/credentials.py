"""The credentials the sandbox accepts, read where both the sandbox and a run find them.

`RECON_SANDBOX_API_KEY` / `RECON_SANDBOX_BEARER_TOKEN`, else the documented demo values.
`recon nightly --sandbox` reads them here too (`credentials: sandbox`), so the run's key
is never handed over through the environment or a parameter.
"""

from __future__ import annotations

import os

__all__ = ["DEMO_API_KEY", "DEMO_BEARER_TOKEN", "sandbox_credentials"]

DEMO_API_KEY = "sandbox-demo-key"
DEMO_BEARER_TOKEN = "sandbox-demo-token"  # noqa: S105 - the documented demo token


def sandbox_credentials() -> tuple[str, str]:
    """(API key, bearer token) the sandbox accepts in this environment."""
    key = os.environ.get("RECON_SANDBOX_API_KEY") or DEMO_API_KEY
    token = os.environ.get("RECON_SANDBOX_BEARER_TOKEN") or DEMO_BEARER_TOKEN
    return key, token
