"""Crash through the real CLI: `kill -9` of `recon nightly` (the Prefect flow, no standing
Prefect server), then `recon nightly --resume`.

Pass: the resumed run completes (exit 0) with every record, and the killed run leaves no
process behind — in particular not the temporary Prefect server it started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recon.sandbox.app import SandboxConfig
from recon.sandbox.server import serve_in_thread

from .conftest import KEY, TABLES, TOKEN, read_only, truth_of

# A heavy kill/resume run like the 20 kill -9s: `make test-scale` (CI runs it beside `make test`)
pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.scale,
    pytest.mark.xdist_group("prefect"),
]


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_crash_kill_9_of_recon_nightly_leaves_no_process_and_resumes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECON_", "PREFECT_"))}
    env.update(
        RECON_API_KEY=KEY,
        RECON_BEARER_TOKEN=TOKEN,
        RECON_LANDING_BATCH_RECORDS="1000",
        RECON_CONCURRENCY="1",
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="90",
    )
    config = SandboxConfig(seed=6, payments=15_000, api_key=KEY, bearer_token=TOKEN)
    with serve_in_thread(config) as url:
        argv = [sys.executable, "-m", "recon", "nightly", "--base-url", url]
        proc = subprocess.Popen(
            argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 120
        while len(list(tmp_path.glob("data/landing/*/*/batch-*.parquet"))) < 3:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no batch landed in time"
            time.sleep(0.01)
        spawned = _descendants(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)  # reaps it and closes its pipe
        time.sleep(3)
        left = sorted(p for p in spawned if _alive(p))
        for pid in left:  # clean up what the killed run left (these are ours)
            os.kill(pid, signal.SIGTERM)

        resumed = subprocess.run(
            [*argv, "--resume"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        truth = truth_of(url)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    con = read_only(tmp_path / "data" / "recon.duckdb")
    for table in TABLES:
        n = con.execute(f"SELECT count(*), count(DISTINCT id) FROM {table}").fetchone()
        assert n == (truth["counts"][table],) * 2, table
    assert not left, f"kill -9 of `recon nightly` left {len(left)} process(es) running"
