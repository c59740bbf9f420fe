"""The accounts' fork server starts as soon as a night knows its accounts
(`recon.accounts.processes.start_fork_server`): `recon nightly` starts it before it loads
Prefect, so that its imports run beside Prefect's start-up instead of before every
account's first request; the accounts' processes then fork from that same server."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from recon.cli import app

from .conftest import closed_port_url, entry, set_keys, write_toml

needs_fork_server = pytest.mark.skipif(
    sys.platform != "linux" or "forkserver" not in multiprocessing.get_all_start_methods(),
    reason="a fork server, and /proc to see it",
)

# A fresh interpreter (a fork server is one per process): how many fork servers this
# process has (its children running multiprocessing.forkserver) after each call.
SERVERS = """
import json, os
from pathlib import Path
from recon.accounts import processes

processes.cores = lambda: 4  # as on a four-core machine

def servers():
    me = str(os.getpid())
    found = []
    for proc in Path("/proc").iterdir():
        try:
            ppid = (proc / "stat").read_text().rsplit(")", 1)[1].split()[1]
            cmd = (proc / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if ppid == me and b"forkserver" in cmd:
            found.append(proc.name)
    return found

one = processes.start_fork_server(1)
after_one = servers()
three = processes.start_fork_server(3)
after_three = servers()
processes.AccountProcesses(int)  # what the night does next: the same server
after_night = servers()
print(json.dumps([one, len(after_one), three, after_three, after_night]))
"""


@needs_fork_server
def test_a_fork_server_starts_for_several_accounts_and_the_night_uses_it() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SERVERS], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    one, after_one, three, after_three, after_night = json.loads(out)
    assert (one, after_one) == (False, 0)  # one account runs here: no fork server
    assert three is True
    assert len(after_three) == 1
    assert after_night == after_three  # AccountProcesses forks from the server started early


def test_where_there_is_no_fork_server_none_is_started(monkeypatch: pytest.MonkeyPatch) -> None:
    from recon.accounts import processes

    monkeypatch.setattr(processes, "cores", lambda: 4)
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    monkeypatch.setattr(processes, "_context", lambda: pytest.fail("nothing to start"))
    assert processes.start_fork_server(3) is False


class _Stop(Exception):
    pass


def _nightly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *options: str
) -> tuple[list[Any], Any]:
    """`recon nightly` over two accounts, stopped where it loads the orchestrator (Prefect):
    what happened before that, in order."""
    set_keys(monkeypatch, "eu", "us")
    url = closed_port_url()  # nothing is requested before the orchestrator
    write_toml(tmp_path / "recon.toml", {"eu": entry("eu", url), "us": entry("us", url)})
    calls: list[Any] = []

    def started(accounts: int) -> bool:
        calls.append(("fork server", accounts))
        return True

    def orchestrator() -> Any:
        calls.append("orchestrator")
        raise _Stop

    monkeypatch.setattr("recon.accounts.processes.start_fork_server", started)
    monkeypatch.setattr("recon.orchestrator.load_orchestrator", orchestrator)
    result = CliRunner().invoke(app, ["nightly", *options])
    return calls, result


def test_nightly_starts_the_fork_server_before_it_loads_prefect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls, result = _nightly(tmp_path, monkeypatch)
    assert isinstance(result.exception, _Stop), result.output
    assert calls == [("fork server", 2), "orchestrator"]


def test_nightly_on_dask_starts_no_fork_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls, result = _nightly(tmp_path, monkeypatch, "--task-runner", "dask")
    assert isinstance(result.exception, _Stop), result.output
    assert calls == ["orchestrator"]  # the accounts run on the workers


def test_a_bad_account_stops_the_night_before_any_fork_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch, "eu")  # us's key is not set
    url = closed_port_url()
    write_toml(tmp_path / "recon.toml", {"eu": entry("eu", url), "us": entry("us", url)})
    calls: list[Any] = []
    monkeypatch.setattr(
        "recon.accounts.processes.start_fork_server", lambda n: calls.append(n) or True
    )
    result = CliRunner().invoke(app, ["nightly"])
    assert result.exit_code == 2, result.output
    assert "RECON_US_API_KEY" in result.output
    assert calls == []
