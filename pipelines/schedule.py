"""`recon schedule`: serve the nightly flow on a cron schedule.

Prefect's temporary server runs no scheduler (FACTS.md), so this uses the server at
`PREFECT_API_URL` when one is configured, and otherwise starts a standing local one on
127.0.0.1:4200 with its services and says so (`pipelines.server`). The cron line is
evaluated in an IANA timezone (DST-safe: a 02:00 run on a spring-forward night runs at
03:00, and once on a fall-back night).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from recon.errors import ConfigError


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


def serve(p: Plan, *, say: Callable[[str], None]) -> None:
    """Serve the nightly flow on the plan's schedule until interrupted."""
    from prefect.schedules import Cron

    from pipelines.server import STANDING_PORT, prefect_server

    with prefect_server(say, services=True, port=STANDING_PORT):
        from pipelines.nightly import nightly

        nightly.serve(
            name="recon-nightly",
            schedule=Cron(p.cron, timezone=p.timezone),
            parameters={"trigger": "schedule"},
        )
