"""Business days: Monday to Friday, less the holidays of `[bank] calendar` (a country code
of the `holidays` package). `bank_days` holds every day of a span with the business day its
payments belong to (itself, or the next business day) and a running count of business days,
so that "n business days after D" is an equality join in SQL."""

from __future__ import annotations

from datetime import date, timedelta

import pyarrow as pa

__all__ = ["business_days"]


def business_days(first: date, last: date, calendar: str | None) -> pa.Table:
    """`bank_days`' rows from `first` to `last` (inclusive)."""
    names: dict[date, str] = {}
    if calendar:
        import holidays

        found = holidays.country_holidays(calendar, years=range(first.year, last.year + 1))
        names = {d: str(n) for d, n in found.items()}
    days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
    business = [d.weekday() < 5 and d not in names for d in days]
    counts: list[int] = []
    running = 0
    for flag in business:
        running += flag
        counts.append(running)
    belongs: list[date] = [days[-1]] * len(days)
    following = days[-1]
    for i in range(len(days) - 1, -1, -1):
        if business[i]:
            following = days[i]
        belongs[i] = following
    return pa.table(
        {
            "day": pa.array(days, pa.date32()),
            "business": pa.array(business, pa.bool_()),
            "business_day": pa.array(belongs, pa.date32()),
            "bday_no": pa.array(counts, pa.int32()),
            "holiday": pa.array([names.get(d) for d in days], pa.string()),
        }
    )
