"""A nightly schedule: a cron line evaluated in an IANA timezone, validated up front.

DST-safe by construction (cronsim evaluates wall-clock times in the zone): a 02:00 run on
a spring-forward night runs at 03:00, and once on a fall-back night. Serving the schedule
is the orchestrator's job (`recon.orchestrator`); this module knows nothing of Prefect.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from recon.errors import ConfigError

__all__ = ["Plan", "plan"]


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
