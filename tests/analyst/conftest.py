"""A real warehouse for the analysts' tests: two nights of `recon nightly` against the sandbox
(600 payments, its books too), published as recon publishes it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recon.night import nightly as steps


@pytest.fixture(scope="session")
def analyst_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from recon.sandbox.app import SandboxConfig
    from recon.sandbox.ledger.files import sandbox_ledger
    from recon.sandbox.server import serve_in_thread

    root = tmp_path_factory.mktemp("analyst")
    mp = pytest.MonkeyPatch()
    for name in list(os.environ):
        if name.startswith("RECON_"):
            mp.delenv(name)
    mp.setenv("RECON_API_KEY", "sandbox-demo-key")
    overrides = {
        "db": str(root / "data" / "recon.duckdb"),
        "landing": str(root / "data" / "landing"),
        "reports": str(root / "reports"),
    }
    overrides.update(sandbox_ledger(7, 600, root / "data"))
    try:
        with serve_in_thread(SandboxConfig(seed=7, payments=600)) as url:
            steps.run_local({**overrides, "base_url": url})
            steps.run_local({**overrides, "base_url": url})  # a second night
    finally:
        mp.undo()
    return root / "data" / "recon.duckdb"
