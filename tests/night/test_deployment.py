"""The deployment as docs/deployment.md gives it (issue 37, points 1 and 2): a standing
`prefect server start` on 127.0.0.1, `prefect work-pool create recon --type process`,
`prefect deploy --all` and `prefect worker start --pool recon` in the checkout with only
`RECON_*` variables, then the deployment run against the sandbox: a complete night is
Completed, a refused key Failed, an incomplete night Failed named Incomplete; a night
cancelled from Prefect (while it pages, while it loads) ends Cancelled with one line naming
`recon nightly --resume RUN_ID` (point 3); the server's scheduler creates the deployment's
runs. Before, every run crashed (the pull step's blank `{{ $RECON_HOME }}`), the timezone was
Europe/Berlin whatever RECON_TIMEZONE said, a cancel left "Crash detected!" (and a DuckDB
traceback) in the worker's log, and no scheduled run ever appeared."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from .conftest import KEY, TOKEN, sandbox

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.xdist_group("prefect")]

CHECKOUT = Path(__file__).resolve().parents[2]
PREFECT = shutil.which("prefect", path=os.path.dirname(sys.executable)) or "prefect"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Prefect:
    api: str
    env: dict[str, str]
    logs: Path

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [PREFECT, *args],
            cwd=CHECKOUT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return done

    def get(self, path: str) -> Any:
        return httpx.get(f"{self.api}{path}", timeout=30).raise_for_status().json()

    def post(self, path: str, body: dict[str, Any]) -> Any:
        for _ in range(20):  # SQLite under load: the server answers 503 for a moment
            response = httpx.post(f"{self.api}{path}", json=body, timeout=30)
            if response.status_code != 503:
                break
            time.sleep(0.5)
        return response.raise_for_status().json()


def _started(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(args, cwd=CHECKOUT, env=env, stdout=out, stderr=subprocess.STDOUT)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def prefect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prefect]:
    """A standing Prefect server (with its scheduler) on a free port of 127.0.0.1."""
    home = tmp_path_factory.mktemp("deployment")
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECON_", "PREFECT_"))}
    env.update(
        PREFECT_HOME=str(home / "prefect-home"),
        PREFECT_API_URL=api,
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        PREFECT_WORKER_QUERY_SECONDS="1",  # the worker looks for runs every second
    )
    server = _started(
        [PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port), "--no-ui"],
        env,
        home / "server.log",
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{api}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None, (home / "server.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the Prefect server did not start"
            time.sleep(0.2)
        yield Prefect(api, env, home)
    finally:
        _stop(server)


def _final_state(prefect: Prefect, run_id: str, timeout_s: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state: dict[str, Any] = prefect.get(f"/flow_runs/{run_id}")["state"]
        if state["type"] in {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}:
            return state
        time.sleep(0.5)
    raise AssertionError(f"flow run {run_id} did not finish: {state}")


def _type(run: dict[str, Any]) -> str | None:
    state: dict[str, Any] = run.get("state") or {}
    return state.get("type")


def _cancel_during(prefect: Prefect, flow_run_id: str, steps: tuple[str, ...]) -> float | None:
    """Set the flow run CANCELLING (as the UI's cancel does) once one of its tasks `steps`
    runs; the seconds from that request until the run was CANCELLED (for the report, not
    asserted). None: the run ended before any of them was seen running — a 300-payment
    night's load and checks can end between two looks (the early load did most of the load;
    the server hears of a task's states a moment late): the caller tries another run."""
    deadline = time.monotonic() + 240
    step = " or ".join(steps)
    while True:
        tasks = prefect.post("/task_runs/filter", {"flow_runs": {"id": {"any_": [flow_run_id]}}})
        if any(t["name"].startswith(steps) and _type(t) == "RUNNING" for t in tasks):
            break
        if prefect.get(f"/flow_runs/{flow_run_id}")["state"]["type"] not in {
            "SCHEDULED",
            "PENDING",
            "RUNNING",
        }:
            return None
        assert time.monotonic() < deadline, f"the run never reached its {step} step"
        time.sleep(0.1)
    asked = time.monotonic()
    prefect.post(
        f"/flow_runs/{flow_run_id}/set_state",
        {"state": {"type": "CANCELLING", "name": "Cancelling"}, "force": True},
    )
    while prefect.get(f"/flow_runs/{flow_run_id}")["state"]["type"] != "CANCELLED":
        assert time.monotonic() < asked + 120, "the run was not cancelled"
        time.sleep(0.1)
    return time.monotonic() - asked


def _said_once_how_to_resume(prefect: Prefect, flow_run_id: str, landing: Path) -> None:
    """The worker's log holds, for the run, one line naming `recon nightly --resume RUN_ID`
    (a run whose pages are kept), no traceback and no crash report."""
    name = prefect.get(f"/flow_runs/{flow_run_id}")["name"]
    deadline = time.monotonic() + 30  # the engine's last lines come after the state
    while True:
        log = (prefect.logs / "worker.log").read_text()
        ours = [line for line in log.splitlines() if f"Flow run '{name}' - recon: stopped" in line]
        if ours or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(ours) == 1, log[-5000:]
    run_id = ours[0].rsplit("--resume ", 1)[1].rstrip("`")
    assert (landing / run_id).is_dir()  # the landed pages are kept for --resume
    assert "Traceback" not in log, log[-5000:]
    assert "Crash" not in log, log[-5000:]  # "Crash detected!", "Finished in state Crashed"
    for line in log.splitlines():  # nor an error line of the run's engine
        assert not (f"'{name}'" in line and "ERROR" in line), line


def test_the_deployment_runs_from_the_checkout_and_its_states_say_what_the_night_was(
    prefect: Prefect, tmp_path: Path
) -> None:
    recon = {
        "RECON_API_KEY": KEY,
        "RECON_BEARER_TOKEN": TOKEN,
        "RECON_TIMEZONE": "America/New_York",
        "RECON_DB": str(tmp_path / "data" / "recon.duckdb"),
        "RECON_LANDING": str(tmp_path / "data" / "landing"),
        "RECON_REPORTS": str(tmp_path / "reports"),
        "RECON_BACKOFF_INITIAL_S": "0.01",
        "RECON_BACKOFF_MAX_S": "0.05",
    }
    env = {**prefect.env, **recon}
    deployer = Prefect(prefect.api, env, prefect.logs)
    deployer.cli("work-pool", "create", "recon", "--type", "process")
    deployer.cli("--no-prompt", "deploy", "--all")

    deployment = prefect.post("/deployments/filter", {})[0]
    assert deployment["name"] == "recon-nightly"
    [schedule] = deployment["schedules"]
    assert schedule["schedule"]["timezone"] == "America/New_York"  # RECON_TIMEZONE: one source
    # RECON_SCHEDULE_CRON's default (02:00) as the RRULE Prefect's scheduler computes
    assert "RRULE:FREQ=DAILY;BYHOUR=2;BYMINUTE=0;BYSECOND=0" in schedule["schedule"]["rrule"]
    assert deployment["pull_steps"] == [{"pipelines.deployment.checkout": {}}]

    with sandbox(seed=13, payments=300) as url:
        worker = _started(
            [PREFECT, "worker", "start", "--pool", "recon", "--type", "process"],
            {**env, "RECON_BASE_URL": url},
            prefect.logs / "worker.log",
        )
        try:

            def night(job_env: dict[str, str] | None = None) -> dict[str, Any]:
                body: dict[str, Any] = {"parameters": {"trigger": "test"}}
                if job_env:
                    body["job_variables"] = {"env": job_env}
                run = prefect.post(f"/deployments/{deployment['id']}/create_flow_run", body)
                return _final_state(prefect, run["id"])

            complete = night()
            assert (complete["type"], complete["name"]) == ("COMPLETED", "Completed"), complete

            refused = night({"RECON_API_KEY": "refused-key"})
            assert refused["type"] == "FAILED", refused
            assert "refused-key" not in str(refused)

            httpx.post(
                f"{url}/_sandbox/faults",
                json={"poison": ["disputes:3"]},
                headers={"x-api-key": KEY},
            ).raise_for_status()
            incomplete = night()
            assert (incomplete["type"], incomplete["name"]) == ("FAILED", "Incomplete"), incomplete
            assert "incomplete (exit 3)" in incomplete["message"]
            worker_log = (prefect.logs / "worker.log").read_text()
            assert "Traceback" not in worker_log, worker_log[-5000:]  # one line per ending

            # Cancelled from Prefect, while it pages and while it loads or checks: the night stops
            # itself and the run ends Cancelled, in one line naming the run to resume
            after_extract = ("load-", "check-")
            for steps, latency_ms in ((("extract-",), 300), (after_extract, 0)):
                httpx.post(
                    f"{url}/_sandbox/faults",
                    json={"poison": [], "latencyMs": latency_ms},
                    headers={"x-api-key": KEY},
                ).raise_for_status()
                for _attempt in range(4):  # a run that ended before its step was seen: again
                    run = prefect.post(
                        f"/deployments/{deployment['id']}/create_flow_run",
                        {"parameters": {"trigger": "test"}},
                    )
                    took = _cancel_during(prefect, run["id"], steps)
                    if took is not None:
                        break
                assert took is not None, f"no run of four was seen in {steps} to cancel"
                cancelled = _final_state(prefect, run["id"], timeout_s=120)
                print(f"cancelled in {steps}: Cancelled {took:.1f} s after the request")
                assert cancelled["type"] == "CANCELLED", cancelled
                _said_once_how_to_resume(prefect, run["id"], tmp_path / "data" / "landing")
        finally:
            _stop(worker)

    assert (tmp_path / "data" / "recon.duckdb").exists()  # the worker's RECON_DB

    # What docs/deployment.md's automation matches: a flow-run event of the deployment whose
    # state type is FAILED; the event is named after the state (prefect.flow-run.Incomplete).
    wanted = {"prefect.flow-run.Failed", "prefect.flow-run.Incomplete"}
    deadline = time.monotonic() + 60  # the server persists events in batches
    failed: set[str] = set()
    while not wanted <= failed and time.monotonic() < deadline:
        events = prefect.post(
            "/events/filter",
            {"filter": {"event": {"prefix": ["prefect.flow-run."]}}, "limit": 50},
        )["events"]
        failed = {
            e["event"]
            for e in events
            if e["resource"].get("prefect.state-type") == "FAILED"
            and any(
                r.get("prefect.resource.role") == "deployment"
                and r.get("prefect.resource.name") == "recon-nightly"
                for r in e.get("related", [])
            )
        }
        time.sleep(1)
    assert wanted <= failed, failed
    print(prefect.cli("flow-run", "ls").stdout)  # what an operator sees (pytest -s)


def test_the_scheduler_creates_the_deployments_nightly_runs(prefect: Prefect) -> None:
    """The server's scheduler creates the deployment's runs at RECON_SCHEDULE_CRON's times in
    RECON_TIMEZONE. Before, Prefect 3.9.1's scheduler failed every cron schedule on Python
    < 3.13 (`tzinfo must be of type ZoneInfo (exactly)`): no run was ever scheduled."""
    deployer = Prefect(
        prefect.api,
        {**prefect.env, "RECON_SCHEDULE_CRON": "30 2 * * 1-5", "RECON_TIMEZONE": "Asia/Tokyo"},
        prefect.logs,
    )
    deployer.cli("work-pool", "create", "recon", "--type", "process", "--overwrite")
    deployer.cli("--no-prompt", "deploy", "--all")
    deadline = time.monotonic() + 60
    scheduled: list[Any] = []
    while len(scheduled) < 3 and time.monotonic() < deadline:
        scheduled = prefect.post(
            "/flow_runs/filter", {"flow_runs": {"state": {"type": {"any_": ["SCHEDULED"]}}}}
        )
        time.sleep(1)
    assert len(scheduled) >= 3, "the scheduler created no run of the deployment"
    tokyo = ZoneInfo("Asia/Tokyo")
    for run in scheduled:
        at = datetime.fromisoformat(run["expected_start_time"]).astimezone(tokyo)
        assert (at.hour, at.minute, at.isoweekday() <= 5) == (2, 30, True), at
    assert "ZoneInfo (exactly)" not in (prefect.logs / "server.log").read_text()
