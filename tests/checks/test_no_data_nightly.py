"""End to end: a complete night, then a night on which every API call fails. No check of the
second night may pass, and nothing found on the first may be resolved by it."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest

from recon.night import nightly as steps
from recon.sandbox.app import SandboxConfig, create_app
from recon.sandbox.server import InProcessTransport

pytestmark = pytest.mark.slow  # two full nightlies (in-process sandbox)

KEY = "no-data-key"
ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("RECON_API_KEY", KEY)
    monkeypatch.setenv("RECON_BACKOFF_INITIAL_S", "0")
    monkeypatch.setenv("RECON_BACKOFF_MAX_S", "0")
    monkeypatch.setenv("RECON_MAX_ATTEMPTS", "2")
    monkeypatch.chdir(tmp_path)


def _overrides(tmp_path: Path) -> dict[str, Any]:
    return {
        "base_url": "http://127.0.0.1:9",
        "db": str(tmp_path / "data" / "recon.duckdb"),
        "landing": str(tmp_path / "data" / "landing"),
        "reports": str(tmp_path / "reports"),
    }


def _unavailable(request: httpx.Request) -> httpx.Response:
    n = _unavailable.calls = getattr(_unavailable, "calls", 0) + 1  # type: ignore[attr-defined]
    return httpx.Response(
        503,
        json={"error": "unavailable", "message": "down", "requestId": f"req_down_{n}"},
        request=request,
    )


def test_no_check_passes_on_a_night_when_every_call_fails(tmp_path: Path) -> None:
    app = create_app(SandboxConfig(api_key=KEY, payments=400, anchor=ANCHOR, seed=3))
    transport = InProcessTransport(app)
    try:
        first = steps.run_local(_overrides(tmp_path), transport=transport)
    finally:
        transport.close()
    assert first.status == "complete"

    night = steps.run_local(_overrides(tmp_path), transport=httpx.MockTransport(_unavailable))
    assert (night.status, night.exit_code) == ("incomplete", steps.EXIT_INCOMPLETE)
    con = duckdb.connect(str(night.db_path), read_only=True)
    statuses = dict(
        con.execute(
            "SELECT check_name, status FROM check_runs WHERE run_id = ?", [night.run_id]
        ).fetchall()
    )
    assert len(statuses) >= 20
    assert sorted(name for name, status in statuses.items() if status == "passed") == []
    assert statuses.pop("extraction_completeness") == "failed"
    assert set(statuses.values()) == {"not_evaluated"}
    states = dict(
        con.execute(
            "SELECT state, count(*) FROM findings WHERE run_id = ? GROUP BY state", [night.run_id]
        ).fetchall()
    )
    assert "resolved" not in states
    kept = con.execute(
        "SELECT count(*) FROM findings WHERE run_id = ? AND state = 'open'", [night.run_id]
    ).fetchone()
    opened = con.execute(
        "SELECT count(*) FROM findings WHERE run_id = ? AND state IN ('new', 'open')",
        [first.run_id],
    ).fetchone()
    assert kept == opened
    con.close()
