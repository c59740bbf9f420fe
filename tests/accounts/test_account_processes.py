"""Each account's night in a process of its own (recon.accounts.processes): its calls are made
there, its progress and log lines come back here, its outcome is the same as on a thread,
and an account whose process is killed is that account's outcome, not the night's."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from recon.accounts.night import GroupSummary, run_group_local
from recon.warehouse.nightlock import lock_path

from .conftest import Recorder, account_sandbox, entry, key_of, set_keys, token_of, write_toml

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _callers(tmp_path: Path, name: str) -> set[int]:
    """The pids that made account `name`'s calls (its landed calls-*.parquet say)."""
    landed = (tmp_path / "data" / "landing" / name).rglob("calls-*.parquet")
    return {int(p.stem.split("-")[2]) for p in landed}


def _night(tmp_path: Path, processes: bool | None) -> GroupSummary:
    from recon.night import progress

    progress.use(recorder := Recorder())  # type: ignore[arg-type]
    try:
        summary = run_group_local({}, processes=processes)
    finally:
        progress.use(None)
    assert ("eu/payments", "complete") in recorder.done_
    assert ("us/payments", "complete") in recorder.done_
    return summary


@pytest.mark.parametrize("processes", [None, False])
def test_accounts_in_processes_of_their_own_or_on_threads(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    processes: bool | None,
) -> None:
    monkeypatch.setattr("recon.accounts.processes.cores", lambda: 4)  # as on a four-core box
    set_keys(monkeypatch, "eu", "us")
    caplog.set_level(logging.INFO, logger="recon.accounts")
    with (
        account_sandbox("eu", seed=11, payments=400) as eu,
        account_sandbox("us", seed=12, payments=300, poison=("disputes:3",)) as us,
    ):
        write_toml(tmp_path / "recon.toml", {"eu": entry("eu", eu), "us": entry("us", us)})
        summary = _night(tmp_path, processes)
    by = {o.account: o for o in summary.outcomes}
    assert (by["eu"].status, by["eu"].exit_code) == ("complete", 0)
    assert (by["us"].status, by["us"].exit_code) == ("incomplete", 3)
    assert summary.exit_code == 3
    assert Path(str(by["us"].db_path)).resolve() == tmp_path / "data/accounts/us/recon.duckdb"
    assert by["eu"].report_dir is not None
    assert (by["eu"].report_dir / "report.html").exists()
    assert any(x.strip().startswith("FAILED") for x in by["us"].lines)
    assert (tmp_path / "reports" / "group.html").exists()
    # The accounts' log lines reach this process's loggers, whichever process wrote them.
    said = [r.getMessage() for r in caplog.records if r.name == "recon.accounts"]
    assert any(m.startswith("account eu: complete (exit 0), run ") for m in said), said
    assert any(m.startswith("account us: incomplete (exit 3), run ") for m in said), said
    assert not any(key_of(n) in m or token_of(n) in m for m in said for n in ("eu", "us"))
    callers = _callers(tmp_path, "eu") | _callers(tmp_path, "us")
    if processes is None:  # two accounts, four cores: each its own process, none of them ours
        assert len(callers) == 2, callers
        assert os.getpid() not in callers
    else:
        assert callers == {os.getpid()}


def test_an_account_whose_process_is_killed_is_its_own_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("recon.accounts.processes.cores", lambda: 4)
    set_keys(monkeypatch, "eu", "uk")
    with (
        account_sandbox("eu", seed=13, payments=300) as eu,
        account_sandbox("uk", seed=14, payments=4000, latency_ms=40) as uk,
    ):
        write_toml(
            tmp_path / "recon.toml",
            {"eu": entry("eu", eu), "uk": entry("uk", uk, concurrency=1, page_size=50)},
        )
        result: list[GroupSummary] = []
        night = threading.Thread(target=lambda: result.append(run_group_local({})))
        night.start()
        lock = lock_path(tmp_path / "data" / "accounts" / "uk" / "recon.duckdb")
        holder = 0
        deadline = time.monotonic() + 60
        while not holder and time.monotonic() < deadline:  # uk's process has taken its lock
            text = lock.read_text().strip() if lock.exists() else ""
            holder = int(text) if text.isdigit() and int(text) != os.getpid() else 0
            time.sleep(0.02)
        assert holder, "uk's night never started"
        cmdline = Path(f"/proc/{holder}/cmdline")
        if cmdline.exists():  # its key came in its environment, never on its command line
            assert key_of("uk").encode() not in cmdline.read_bytes()
        os.kill(holder, signal.SIGKILL)
        night.join(timeout=120)
    (summary,) = result
    by = {o.account: o for o in summary.outcomes}
    assert (by["eu"].status, by["eu"].exit_code) == ("complete", 0)
    assert (by["uk"].status, by["uk"].exit_code) == ("aborted", 1)
    assert "its process ended (exit -9) before its night did" in (by["uk"].reason or "")
    assert summary.exit_code == 1
    assert (tmp_path / "reports" / "group.html").exists()
