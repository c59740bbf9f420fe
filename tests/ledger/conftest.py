"""Fixtures of the ledger tests: a clean RECON_* environment in a temporary folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

KEY = "ledger-test-key"
TOKEN = "ledger-test-token"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("RECON_API_KEY", KEY)
    monkeypatch.setenv("RECON_BEARER_TOKEN", TOKEN)
    monkeypatch.setenv("RECON_BACKOFF_INITIAL_S", "0.01")
    monkeypatch.setenv("RECON_BACKOFF_MAX_S", "0.05")
    monkeypatch.chdir(tmp_path)
