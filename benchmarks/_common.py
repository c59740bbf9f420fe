"""Shared helpers: paths, timed subprocesses with their own peak RSS, the sandbox server."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
VENV_BIN = ROOT / ".venv" / "bin"
PYTHON = str(VENV_BIN / "python") if (VENV_BIN / "python").exists() else sys.executable
RECON = str(VENV_BIN / "recon")
API_KEY = "sandbox-demo-key"
API_PREFIX = "/api/v1"
SEED = 1


@dataclass
class Proc:
    """One finished child process: wall time, its own peak RSS, exit code, output."""

    argv: list[str]
    wall_s: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def last_json(self) -> dict[str, Any]:
        """The last stdout line that parses as a JSON object (the child's own report)."""
        for line in reversed(self.stdout.strip().splitlines()):
            line = line.strip()
            if line.startswith("{"):
                with contextlib.suppress(json.JSONDecodeError):
                    value = json.loads(line)
                    if isinstance(value, dict):
                        return value
        return {}

    def tail(self, n: int = 6) -> str:
        lines = (self.stderr.strip() or self.stdout.strip()).splitlines()
        return "\n".join(lines[-n:])


def _hwm_kb(pid: int) -> int:
    """VmHWM (peak RSS) of a live process in KiB; 0 when gone or not readable."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_s_of(pid: int) -> float:
    """CPU-seconds (user + system) a live process has used itself; 0.0 when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
    except (OSError, ValueError, IndexError):
        return 0.0


def _descendants(root: int) -> list[int]:
    """Live descendants of `root`, from the ppid field of /proc/*/stat."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
            ppid = int(stat.rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            found.append(kid)
            todo.append(kid)
    return found


def run_measured(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 3600.0,
) -> Proc:
    """Run `argv` to completion; wall time and peak RSS.

    Peak RSS is VmHWM from /proc, sampled every 5 ms for the child and every 50 ms for its
    descendants (e.g. Prefect's temporary server): the largest single process. Not
    `ru_maxrss` from wait4: on Linux that includes the *parent's* RSS at fork time (the
    pre-exec copy), which made a bare `python -c pass` read as 82 MB.
    """
    full_env = {**os.environ, **(env or {})}
    out_path = RESULTS / f".out-{os.getpid()}.txt"
    err_path = RESULTS / f".err-{os.getpid()}.txt"
    RESULTS.mkdir(parents=True, exist_ok=True)
    peaks: dict[int, int] = {}
    cpu: dict[int, float] = {}
    with out_path.open("wb") as out, err_path.open("wb") as err:
        started = time.perf_counter()
        child = subprocess.Popen(list(argv), stdout=out, stderr=err, env=full_env, cwd=cwd or ROOT)
        deadline = started + timeout
        tick = 0
        while True:
            pids = [child.pid, *(_descendants(child.pid) if tick % 10 == 0 else peaks)]
            for pid in pids:
                hwm = _hwm_kb(pid)
                if hwm > peaks.get(pid, 0):
                    peaks[pid] = hwm
                used = cpu_s_of(pid)
                if used > cpu.get(pid, 0.0):
                    cpu[pid] = used
            pid, status, _usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                child.kill()
                pid, status, _usage = os.wait4(child.pid, 0)
                break
            tick += 1
            time.sleep(0.005)
        wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    stdout = out_path.read_text(errors="replace")
    stderr = err_path.read_text(errors="replace")
    out_path.unlink(missing_ok=True)
    err_path.unlink(missing_ok=True)
    return Proc(
        argv=list(argv),
        wall_s=wall,
        peak_rss_mb=max(peaks.values(), default=0) / 1024.0,
        returncode=child.returncode,
        stdout=stdout,
        stderr=stderr,
        extra={
            "own_peak_rss_mb": peaks.get(child.pid, 0) / 1024.0,
            "processes": len(peaks),
            # CPU-seconds of the child and the descendants it waited for (user + system)
            "cpu_s": _usage.ru_utime + _usage.ru_stime,
            # CPU-seconds of the child and every descendant, waited for or not (e.g. a fork
            # server's children): each process's own use, last sampled (every 5 ms for the
            # child, 50 ms for the others: a descendant's last moments may be missed)
            "tree_cpu_s": sum(cpu.values()),
            # the peaks of every process added up (they need not have coincided)
            "sum_peak_rss_mb": sum(peaks.values()) / 1024.0,
        },
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_up(
    base_url: str, timeout: float = 120.0, proc: subprocess.Popen[bytes] | None = None
) -> float:
    """Poll the sandbox's health endpoint until it answers 200; seconds waited."""
    started = time.perf_counter()
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"sandbox exited with {proc.returncode} before answering")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{base_url}/_sandbox/health", timeout=2.0).status_code == 200:
                return time.perf_counter() - started
        if time.perf_counter() - started > timeout:
            raise TimeoutError(f"the sandbox at {base_url} did not answer in {timeout:.0f}s")
        time.sleep(0.05)


SANDBOX_PIDS: dict[str, int] = {}  # base URL -> pid of each running `sandbox_process`


@contextlib.contextmanager
def sandbox_process(
    payments: int, *, seed: int = SEED, unbounded: bool = True, options: Sequence[str] = ()
) -> Iterator[tuple[str, float]]:
    """The sandbox in its own process (its own core and GIL); yields (url, start-up s).

    `unbounded`: `benchmarks._sandbox_serve` (every record kept serialised after the first
    pass, so that the server is not the bottleneck); else `recon sandbox serve` as shipped,
    with `options` added (e.g. `--latency-ms 50 --rate 100`).
    """
    port = free_port()
    if unbounded:
        argv = [PYTHON, "-m", "benchmarks._sandbox_serve", str(port), str(payments), str(seed)]
    else:
        argv = [
            RECON,
            "sandbox",
            "serve",
            "--port",
            str(port),
            "--payments",
            str(payments),
            "--seed",
            str(seed),
            "--faults",
            "none",
            *options,
        ]
    log = (RESULTS / f".sandbox-{port}.log").open("wb")
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    base_url = f"http://127.0.0.1:{port}"
    SANDBOX_PIDS[base_url] = proc.pid
    try:
        wait_until_up(base_url, proc=proc)
        yield base_url, time.perf_counter() - started
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        Path(log.name).unlink(missing_ok=True)
        SANDBOX_PIDS.pop(base_url, None)


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return float("nan")
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0
