"""`recon schedule`: serve the nightly flow on a cron schedule.

Prefect's temporary server runs no scheduler (FACTS.md), so this uses the server at
`PREFECT_API_URL` when one is configured, and otherwise starts a standing local one on
127.0.0.1 and says so. The cron line is evaluated in an IANA timezone (DST-safe: a 02:00
run on a spring-forward night runs at 03:00, and once on a fall-back night).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import httpx
from cronsim import CronSim, CronSimError

from recon.errors import ConfigError

LOCAL_SERVER = "http://127.0.0.1:4200/api"


@dataclass(frozen=True)
class Plan:
    """A validated schedule: cron line, timezone, and the next run times."""

    cron: str
    timezone: str

    def next_runs(self, count: int = 5, *, after: datetime | None = None) -> list[datetime]:
        zone = ZoneInfo(self.timezone)
        start = (after or datetime.now(zone)).astimezone(zone)
        it = CronSim(self.cron, start)
        return [next(it) for _ in range(count)]

    def describe(self) -> str:
        runs = "\n".join(f"  {t.isoformat()}" for t in self.next_runs())
        return f"schedule: '{self.cron}' in {self.timezone}; next runs:\n{runs}"


def plan(cron: str, timezone: str) -> Plan:
    """Validate a cron line and timezone (a bad one is a ConfigError naming the setting)."""
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError("RECON_TIMEZONE", f"{timezone!r} is not an IANA timezone") from None
    try:
        CronSim(cron, datetime.now(ZoneInfo(timezone)))
    except CronSimError as exc:
        raise ConfigError("RECON_SCHEDULE_CRON", f"{cron!r} is not a cron line: {exc}") from None
    return Plan(cron=cron, timezone=timezone)


def _healthy(api_url: str) -> bool:
    try:
        return httpx.get(f"{api_url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def ensure_server(say: Callable[[str], None]) -> subprocess.Popen[bytes] | None:
    """Use PREFECT_API_URL, or start a standing local Prefect server; returns what it started."""
    configured = os.environ.get("PREFECT_API_URL")
    if configured:
        say(f"using the Prefect server at {configured}")
        return None
    if _healthy(LOCAL_SERVER):
        say(f"using the Prefect server already running at {LOCAL_SERVER}")
        os.environ["PREFECT_API_URL"] = LOCAL_SERVER
        return None
    prefect = shutil.which("prefect", path=os.path.dirname(sys.executable)) or "prefect"
    say(f"no PREFECT_API_URL: starting a standing local Prefect server at {LOCAL_SERVER}")
    proc = subprocess.Popen(  # noqa: S603 - fixed arguments, our own venv's prefect
        [prefect, "server", "start", "--host", "127.0.0.1", "--port", "4200"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if _healthy(LOCAL_SERVER):
            os.environ["PREFECT_API_URL"] = LOCAL_SERVER
            return proc
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    proc.terminate()
    raise ConfigError("PREFECT_API_URL", "is not set and a local Prefect server did not start")


def serve(p: Plan, *, say: Callable[[str], None]) -> None:
    """Serve the nightly flow on the plan's schedule until interrupted."""
    from prefect.schedules import Cron

    server = ensure_server(say)
    try:
        from pipelines.nightly import nightly

        nightly.serve(
            name="recon-nightly",
            schedule=Cron(p.cron, timezone=p.timezone),
            parameters={"trigger": "schedule"},
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
