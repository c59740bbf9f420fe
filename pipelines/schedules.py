"""recon's cron line as the RRULE Prefect's server schedules by (docs/deployment.md).

Prefect 3.9.1's scheduler cannot compute a cron schedule's runs on Python < 3.13: its
`CronSchedule` hands a pendulum datetime to `whenever.ZonedDateTime`, which takes only a
`zoneinfo.ZoneInfo` (exactly) and raises `tzinfo must be of type ZoneInfo (exactly), got
Timezone('UTC')` (prefect/server/schemas/schedules.py, `_get_dates_whenever`; every
`whenever` release checks the type so). Its `RRuleSchedule` computes with dateutil and
zoneinfo instead, so the deployment (`prefect.yaml`) and `recon schedule` give Prefect the
same times as an RRULE: `RECON_SCHEDULE_CRON`'s fields read by cronsim, the library
`recon schedule --show` validates and lists the next runs with (recon.config.schedule).

The same instants, in the same timezone, with one difference: a time the clocks skip
(02:30 on a spring-forward night) comes an hour early by the RRULE (01:30, once if 01:30 is
scheduled too), where cron runs it once the clocks have jumped (tests/night/test_schedules.py
compares two years of runs with cronsim's).
"""

from __future__ import annotations

from datetime import date, datetime

from cronsim import CronSim

from recon.errors import ConfigError

__all__ = ["rrule_for"]

_DAYS = ("SU", "MO", "TU", "WE", "TH", "FR", "SA", "SU")  # cron: 0 and 7 are Sunday
_ALL_DAYS = set(range(1, 32))
_ALL_MONTHS = set(range(1, 13))
_ALL_WEEKDAYS = set(range(8))


def rrule_for(cron: str, *, since: date) -> str:
    """The RRULE (a DTSTART line, then one RRULE line, or two when cron's day-of-month and
    day-of-week are either-or) whose occurrences are the cron line's, from `since`."""
    sim = CronSim(cron, _midnight(since))
    times = [
        f"BYHOUR={_list(sim.hours)}",
        f"BYMINUTE={_list(sim.minutes)}",
        f"BYSECOND={_list(sim.seconds)}",
    ]
    if sim.months != _ALL_MONTHS:
        times.append(f"BYMONTH={_list(sim.months)}")
    monthdays = None if sim.days == _ALL_DAYS else _monthdays(cron, sim.days)
    weekdays = None if set(sim.weekdays) >= _ALL_WEEKDAYS else _weekdays(sim.weekdays)
    if sim.day_and or monthdays is None or weekdays is None:  # one rule, both restrict it
        rules = [_rule(times, monthdays, weekdays)]
    else:  # cron: either the day of the month or the day of the week
        rules = [_rule(times, monthdays, None), _rule(times, None, weekdays)]
    return "\n".join([f"DTSTART:{since:%Y%m%d}T000000", *rules])


def _rule(times: list[str], monthdays: str | None, weekdays: str | None) -> str:
    parts = list(times)
    if monthdays is not None:
        parts.append(f"BYMONTHDAY={monthdays}")
    if weekdays is not None:
        parts.append(f"BYDAY={weekdays}")
    # "the second Monday" (BYDAY=+2MO) is an RRULE of months; the rest, of days
    nth = weekdays is not None and any(d[0] in "+-" for d in weekdays.split(","))
    return "RRULE:" + ";".join([f"FREQ={'MONTHLY' if nth else 'DAILY'}", *parts])


def _monthdays(cron: str, days: set[int]) -> str:
    if CronSim.LAST_WEEKDAY in days:
        raise ConfigError(
            "RECON_SCHEDULE_CRON",
            f"{cron!r}: 'LW' (the last weekday of the month) has no RRULE form for "
            "Prefect's scheduler; name the days instead",
        )
    return ",".join("-1" if d == CronSim.LAST else str(d) for d in sorted(days))


def _weekdays(weekdays: set[int | tuple[int, int]]) -> str:
    named: set[str] = set()
    for item in weekdays:
        if isinstance(item, tuple):  # (day, nth) for 'MON#2'; (day, LAST) for '5L'
            day, which = item
            nth = -1 if which == CronSim.LAST else which
            named.add(f"{nth:+d}{_DAYS[day]}")
        else:
            named.add(_DAYS[item])
    return ",".join(sorted(named))


def _list(values: set[int]) -> str:
    return ",".join(str(v) for v in sorted(values))


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day)
