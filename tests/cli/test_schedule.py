"""The schedule definition: cron in an IANA timezone, DST-safe, validated before serving."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from recon.config.schedule import plan
from recon.errors import ConfigError


def test_default_is_two_in_the_morning_every_day() -> None:
    p = plan("0 2 * * *", "Europe/Berlin")
    runs = p.next_runs(3, after=datetime(2026, 11, 21, 12, tzinfo=ZoneInfo("Europe/Berlin")))
    assert [r.isoformat() for r in runs] == [
        "2026-11-22T02:00:00+01:00",
        "2026-11-23T02:00:00+01:00",
        "2026-11-24T02:00:00+01:00",
    ]


def test_spring_forward_night_still_runs_once() -> None:
    p = plan("0 2 * * *", "Europe/Berlin")
    runs = p.next_runs(3, after=datetime(2027, 3, 27, 12, tzinfo=ZoneInfo("Europe/Berlin")))
    # 2027-03-28 02:00 does not exist in Berlin: the run still happens that night, once.
    assert [r.date().isoformat() for r in runs] == ["2027-03-28", "2027-03-29", "2027-03-30"]
    assert runs[1].isoformat() == "2027-03-29T02:00:00+02:00"


def test_fall_back_night_runs_once() -> None:
    p = plan("30 2 * * *", "Europe/Berlin")
    runs = p.next_runs(2, after=datetime(2026, 10, 24, 12, tzinfo=ZoneInfo("Europe/Berlin")))
    assert [r.date().isoformat() for r in runs] == ["2026-10-25", "2026-10-26"]


@pytest.mark.parametrize(
    ("cron", "tz", "setting"),
    [("0 25 * * *", "UTC", "RECON_SCHEDULE_CRON"), ("0 2 * * *", "Mars/Olympus", "RECON_TIMEZONE")],
)
def test_bad_schedule_names_the_setting(cron: str, tz: str, setting: str) -> None:
    with pytest.raises(ConfigError, match=setting):
        plan(cron, tz)


def test_schedule_show_prints_the_plan_without_serving() -> None:
    from typer.testing import CliRunner

    from recon.cli import app

    result = CliRunner().invoke(app, ["schedule", "--show", "--timezone", "Europe/Berlin"])
    assert result.exit_code == 0
    assert "0 2 * * *" in result.output
    assert "Europe/Berlin" in result.output
