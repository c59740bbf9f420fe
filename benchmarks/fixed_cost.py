"""Part 6: what a tiny nightly run costs before any real work.

Each figure is a fresh `python` process (what cron or a user starts), measured from outside:

- `import prefect`;
- recon's own Prefect session (what `recon nightly` starts: `prefect server start` as a
  child, Prefect and the flows imported while it boots), on a new and a warm PREFECT_HOME;
- a trivial Prefect flow (no tasks): Prefect's whole floor without a standing server (it
  starts its temporary API server in a child process), once on a new PREFECT_HOME (cold)
  and once more on the same one (warm);
- the sandbox alone: import it, start uvicorn in a thread as `recon nightly --sandbox`
  does, wait until it answers, stop;
- `recon nightly --sandbox --sandbox-payments 1000 --sandbox-faults none`, cold and warm.

work ≈ nightly - trivial flow - (sandbox alone - bare `python -c pass`): the parts are
measured in separate processes, so the split is an estimate.

With a standing server (issue 37: ≤ 3 s), `bench_standing_server` (`make bench` runs it
alone: `python -m benchmarks.fixed_cost --standing`): one `prefect server start` on
127.0.0.1 (started once, not timed), the sandbox in its own process; then the same tiny
night, each in a new folder, alternately as `recon nightly` with `PREFECT_API_URL` at the
server and without Prefect (`run_local`, after the checks `recon nightly` makes before its
flow); the fixed cost is the difference of the medians. The first night on the new server
(it registers the flow) is reported apart.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from benchmarks._common import (
    API_KEY,
    PYTHON,
    RECON,
    RESULTS,
    free_port,
    run_measured,
    sandbox_process,
)

_TRIVIAL_FLOW = """
from prefect import flow

@flow(log_prints=False)
def noop() -> int:
    return 1

noop()
"""

# recon's own Prefect start (pipelines.server): its API server in a child process,
# Prefect and the flows imported while it boots; prints when it answered.
_RECON_SESSION = """
import json, time
t0 = time.perf_counter()
from pipelines.server import prefect_server

with prefect_server(lambda message: None):  # what a session's first run waits for
    ready = time.perf_counter() - t0
print(json.dumps({"ready_s": round(ready, 3)}))
"""

_SANDBOX_ALONE = """
from recon.sandbox.app import SandboxConfig
from recon.sandbox.server import serve_in_thread

with serve_in_thread(SandboxConfig(seed=1, payments=1000, faults="none")) as url:
    pass
"""

_PREFECT_ENV = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_LOGGING_LEVEL": "WARNING",
}


def _row(proc: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "wall_s": round(proc.wall_s, 3),
        "peak_rss_mb": round(proc.peak_rss_mb, 1),
        "ok": proc.ok,
    }
    if not proc.ok:
        row["error"] = proc.tail()
    return row


def bench_fixed_cost(*, say: Any = print) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="recon-bench-fixed-") as tmp:
        root = Path(tmp)
        home = root / "prefect-home"
        env = {**_PREFECT_ENV, "PREFECT_HOME": str(home)}
        out["python_bare"] = _row(run_measured([PYTHON, "-c", "pass"], env=env))
        say("  fixed cost: python -c 'import prefect'")
        out["import_prefect"] = _row(run_measured([PYTHON, "-c", "import prefect"], env=env))
        out["import_recon_cli"] = _row(run_measured([PYTHON, "-c", "import recon.cli"], env=env))
        say("  fixed cost: trivial flow, cold PREFECT_HOME")
        out["trivial_flow_cold"] = _row(run_measured([PYTHON, "-c", _TRIVIAL_FLOW], env=env))
        say("  fixed cost: trivial flow, warm PREFECT_HOME")
        out["trivial_flow_warm"] = _row(run_measured([PYTHON, "-c", _TRIVIAL_FLOW], env=env))
        for kind in ("cold", "warm"):  # the same PREFECT_HOME: new, then used once
            session_home = root / "prefect-home-session"
            say(f"  fixed cost: recon's Prefect session (server start), {kind} PREFECT_HOME")
            proc = run_measured(
                [PYTHON, "-c", _RECON_SESSION],
                env={**_PREFECT_ENV, "PREFECT_HOME": str(session_home)},
                timeout=300,
            )
            out[f"recon_session_{kind}"] = _row(proc)
            out[f"recon_session_{kind}"]["ready_s"] = proc.last_json().get("ready_s")
        say("  fixed cost: sandbox start-up alone")
        out["sandbox_startup"] = _row(run_measured([PYTHON, "-c", _SANDBOX_ALONE], env=env))
        for label, prefect_home in (
            ("nightly_cold", root / "prefect-home-nightly"),
            ("nightly_warm", root / "prefect-home-nightly"),
        ):
            say(f"  fixed cost: recon nightly --sandbox (1,000 payments), {label.split('_')[1]}")
            run_dir = root / label
            proc = run_measured(
                [
                    RECON,
                    "nightly",
                    "--sandbox",
                    "--sandbox-payments",
                    "1000",
                    "--sandbox-faults",
                    "none",
                    "--db",
                    str(run_dir / "recon.duckdb"),
                    "--landing",
                    str(run_dir / "landing"),
                    "--reports",
                    str(run_dir / "reports"),
                ],
                env={**_PREFECT_ENV, "PREFECT_HOME": str(prefect_home)},
                timeout=600,
            )
            out[label] = _row(proc)
            out[label]["exit_code"] = proc.returncode
            out[label]["ok"] = proc.returncode in (0, 3, 4)
    for kind in ("cold", "warm"):
        nightly = out[f"nightly_{kind}"]["wall_s"]
        flow = out[f"trivial_flow_{kind}"]["wall_s"]
        sandbox = out["sandbox_startup"]["wall_s"] - out["python_bare"]["wall_s"]
        out[f"split_{kind}"] = {
            "total_s": nightly,
            "prefect_s": flow,
            "sandbox_s": round(sandbox, 3),
            "work_s": round(max(nightly - flow - sandbox, 0.0), 3),
        }
    return out


#: Issue 37: a night's fixed cost with a standing Prefect server (`PREFECT_API_URL`).
TARGET_STANDING_S = 3.0

# The same night as `recon nightly` without Prefect: its checks before the flow (settings,
# the API probe), then the steps in this process (recon.night.nightly.run_local).
_NIGHT_WITHOUT_PREFECT = """
import recon.cli.run  # what the command imports
from recon.night.nightly import preflight, run_local

preflight(None, probe_api=True)
summary = run_local(None, trigger="cli")
raise SystemExit(summary.exit_code)
"""


@contextlib.contextmanager
def _standing_server(home: Path) -> Iterator[str]:
    """`prefect server start` on a free port of 127.0.0.1 (its services on); its API URL."""
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {**os.environ, **_PREFECT_ENV, "PREFECT_HOME": str(home)}
    env.pop("PREFECT_API_URL", None)
    log = (home.parent / "server.log").open("wb")
    argv = [PYTHON, "-m", "prefect", "server", "start", "--host", "127.0.0.1"]
    proc = subprocess.Popen(
        [*argv, "--port", str(port), "--no-ui"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{api}/health", timeout=2).status_code == 200:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the Prefect server did not start: see server.log")
            time.sleep(0.2)
        yield api
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def bench_standing_server(
    payments: int = 1000, repeat: int = 3, *, say: Any = print
) -> dict[str, Any]:
    """The fixed cost of `recon nightly` with `PREFECT_API_URL` at a standing server: the
    median night with it, less the median of the same night without Prefect."""
    out: dict[str, Any] = {"payments": payments, "repeat": repeat, "target_s": TARGET_STANDING_S}
    with (
        tempfile.TemporaryDirectory(prefix="recon-bench-standing-") as tmp,
        sandbox_process(payments) as (url, _startup),
    ):
        root = Path(tmp)
        base = {
            **_PREFECT_ENV,
            "RECON_API_KEY": API_KEY,
            "RECON_BEARER_TOKEN": "sandbox-demo-token",
            "RECON_BASE_URL": url,
            "PREFECT_HOME": str(root / "client-prefect-home"),
        }
        say("  fixed cost: a standing Prefect server on 127.0.0.1 (started once, not timed)")
        with _standing_server(root / "server-prefect-home") as api:

            def night(label: str, n: int) -> dict[str, Any]:
                work = root / f"{label}-{n}"
                work.mkdir()
                if label == "without":
                    argv = [PYTHON, "-c", _NIGHT_WITHOUT_PREFECT]
                    env = {k: v for k, v in base.items() if not k.startswith("PREFECT_API")}
                else:
                    argv, env = [RECON, "nightly"], {**base, "PREFECT_API_URL": api}
                proc = run_measured(argv, env=env, cwd=work, timeout=600)
                row = _row(proc)
                row["exit_code"] = proc.returncode
                row["ok"] = proc.returncode in (0, 3, 4)  # a night that ended (sandbox findings)
                row["cpu_s"] = round(float(proc.extra.get("tree_cpu_s", 0.0)), 2)  # the night's
                return row  # processes (a shared machine inflates wall far more than CPU)

            say("  fixed cost: the first night on the new server (registers the flow)")
            out["first_with_server"] = night("with", 0)
            rows: dict[str, list[dict[str, Any]]] = {"with": [], "without": []}
            for n in range(1, repeat + 1):
                for label in ("without", "with"):  # alternate: the same load for both
                    say(f"  fixed cost: night {n}/{repeat} {label} Prefect ({payments:,} payments)")
                    rows[label].append(night(label, n))
    for label, runs in rows.items():
        out[f"{label}_prefect"] = runs
        out[f"{label}_median_s"] = round(statistics.median(r["wall_s"] for r in runs), 3)
        out[f"{label}_median_cpu_s"] = round(statistics.median(r["cpu_s"] for r in runs), 3)
    out["ok"] = all(r["ok"] for runs in rows.values() for r in runs)
    out["fixed_s"] = round(out["with_median_s"] - out["without_median_s"], 3)
    out["fixed_cpu_s"] = round(out["with_median_cpu_s"] - out["without_median_cpu_s"], 3)
    out["pass"] = out["ok"] and out["fixed_s"] <= TARGET_STANDING_S
    out["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="recon's fixed cost with a standing server")
    parser.add_argument("--standing", action="store_true", help="the standing-server case")
    parser.add_argument("--payments", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    if not args.standing:
        print(json.dumps(bench_fixed_cost(), indent=2))
        return 0
    result = bench_standing_server(args.payments, args.repeat)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "fixed_standing.json").write_text(json.dumps(result, indent=2) + "\n")

    def walls(label: str) -> str:
        return ", ".join(f"{r['wall_s']:.1f}" for r in result[f"{label}_prefect"])

    print(
        f"night with a standing server, {result['payments']:,} payments: "
        f"with PREFECT_API_URL {result['with_median_s']:.1f} s (median of {walls('with')}), "
        f"without Prefect {result['without_median_s']:.1f} s ({walls('without')}); "
        f"first night on the new server {result['first_with_server']['wall_s']:.1f} s"
    )
    verdict = "pass" if result["pass"] else "FAIL"
    print(
        f"fixed cost {result['fixed_s']:.1f} s, {result['fixed_cpu_s']:.1f} CPU-s "
        f"(target ≤ {TARGET_STANDING_S:g} s): {verdict}; load {result['loadavg_at_end'][0]:.1f}"
    )
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
