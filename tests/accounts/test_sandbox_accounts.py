"""`recon sandbox serve --account …`: several accounts, each its own port, data and key;
the recon.toml it prints reconciles them as they are."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from recon.accounts.night import run_group_local
from recon.sandbox.accounts import account_sandboxes
from recon.sandbox.config import SandboxConfig


def test_account_specs_give_each_account_its_own_data_key_and_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECON_SANDBOX_US_API_KEY", "us-secret-key")
    found = account_sandboxes(
        ["eu", "us:seed=11,rate=50,payments=200,latency_ms=5"], SandboxConfig(seed=7), 8000
    )
    eu, us = found
    assert (eu.port, eu.config.seed, eu.config.api_key) == (8000, 7, "sandbox-eu-key")
    assert (us.port, us.config.seed, us.config.rate, us.config.payments) == (8001, 11, 50, 200)
    assert us.config.api_key == "us-secret-key"
    assert "us-secret-key" not in repr(us)
    with pytest.raises(ValueError, match="unknown option 'colour'"):
        account_sandboxes(["eu:colour=1"], SandboxConfig(), 0)
    with pytest.raises(ValueError, match="given twice"):
        account_sandboxes(["eu", "eu"], SandboxConfig(), 0)


@pytest.mark.integration
@pytest.mark.slow
def test_served_accounts_reconcile_with_the_printed_recon_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "recon",
            "sandbox",
            "serve",
            "--port",
            "0",
            "--payments",
            "100",
            "--account",
            "eu:payments=300",
            "--account",
            "us:payments=200,rate=500",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 120
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line.rstrip("\n"))
            if line.startswith("# export RECON_US"):
                break
        toml = [ln for ln in lines if not ln.startswith(("recon sandbox", "  ", "#"))]
        (tmp_path / "recon.toml").write_text("\n".join(toml) + "\n")
        for line in lines:
            if line.startswith("# export "):
                for pair in line.removeprefix("# export ").split():
                    name, _, value = pair.partition("=")
                    monkeypatch.setenv(name, value)
        assert "rate_limit = 500" in toml
        summary = run_group_local({})
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
    by = {o.account: o for o in summary.outcomes}
    assert (by["eu"].status, by["us"].status) == ("complete", "complete")
    assert summary.exit_code == 0
    import duckdb

    con = duckdb.connect(
        str(tmp_path / "data" / "accounts" / "us" / "recon.duckdb"), read_only=True
    )
    assert con.execute("SELECT count(*) FROM payments").fetchone() == (200,)
    con.close()
