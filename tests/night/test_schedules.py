"""The RRULE a deployment is scheduled by has RECON_SCHEDULE_CRON's times (pipelines.schedules):
Prefect 3.9.1's scheduler computes no cron schedule on Python < 3.13, so recon gives it the
same times as an RRULE, computed by Prefect's own RRuleSchedule and compared here with
cronsim, which `recon schedule --show` lists the next runs with."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from cronsim import CronSim
from prefect.server.schemas.schedules import RRuleSchedule

from pipelines.schedules import rrule_for
from recon.errors import ConfigError

CRONS = [
    "0 2 * * *",  # the default
    "30 1 * * 1-5",
    "30 1,2 * * *",  # a time the clocks pass twice on a fall-back night: once
    "*/20 3,4 * * *",
    "0 2 1,15 * *",
    "0 2 1 * MON",  # day of month OR day of week, as cron reads it
    "15 2 */2 * MON",  # a '*' field: day of month AND day of week
    "0 2 * * MON#2",
    "0 2 L * *",
    "0 6 * * 5L",
    "0 2 * 1,7 SUN",
    "0 0 29 2 *",
]


def _spring_forward(at: datetime) -> bool:
    """Whether the clocks skip an hour on `at`'s day (there, the times differ, see above)."""
    day = datetime(at.year, at.month, at.day, tzinfo=at.tzinfo)
    after = datetime.fromtimestamp(day.timestamp() + 86400 + 3600, at.tzinfo)
    return bool(after.utcoffset() and day.utcoffset() and after.utcoffset() > day.utcoffset())


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Europe/Berlin", "Asia/Tokyo"])
@pytest.mark.parametrize("cron", CRONS)
def test_the_rrule_has_the_cron_lines_times(cron: str, zone: str) -> None:
    tz = ZoneInfo(zone)
    start = datetime(2026, 11, 29, 12, tzinfo=tz)
    end = datetime(2028, 12, 31, tzinfo=tz)  # two years: each clock change twice, a Feb 29
    schedule = RRuleSchedule(rrule=rrule_for(cron, since=start.date()), timezone=zone)
    got = asyncio.run(schedule.get_dates(n=900, start=start, end=end))
    upto_end = itertools.takewhile(lambda t: t <= end, CronSim(cron, start))
    want = list(itertools.islice(upto_end, 900))
    assert want, cron
    # the same instants; on a spring-forward day, a time the clocks skip comes an hour early
    # by the RRULE (with a run an hour before it, once), after the jump by cron
    last = min(got[-1], want[-1])
    same = [t.astimezone(UTC) for t in want if t <= last and not _spring_forward(t)]
    assert [t.astimezone(UTC) for t in got if t <= last and not _spring_forward(t)] == same


def test_a_day_the_rrule_cannot_say_stops_the_deploy_naming_the_setting() -> None:
    with pytest.raises(ConfigError, match="RECON_SCHEDULE_CRON"):
        rrule_for("0 2 LW * *", since=date(2026, 11, 29))
