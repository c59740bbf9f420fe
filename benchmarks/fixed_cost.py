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
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from benchmarks._common import PYTHON, RECON, run_measured

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
