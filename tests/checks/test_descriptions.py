"""Every check's description reads as a sentence for people: no `$parameter` left in it."""

from __future__ import annotations

import re

from recon.checks.definition import render_description
from recon.checks.runner import load_checks

from .builder import Wh

_PLACEHOLDER = re.compile(r"\$[A-Za-z_]")


def test_render_description_puts_the_values_in() -> None:
    text = "stuck more than $stuck_days days; ratio $volume_ratio; statuses $failed_statuses"
    values = {"stuck_days": 7, "volume_ratio": 0.5, "failed_statuses": ["failed", "reversed"]}
    assert render_description(text, values) == (
        "stuck more than 7 days; ratio 0.5; statuses failed, reversed"
    )


def test_every_check_description_in_the_warehouse_has_its_values(wh: Wh) -> None:
    wh.run("r1")
    wh.payment("pay_1", 100)
    wh.checks("r1")
    rows = wh.con.execute("SELECT check_name, description FROM check_runs").fetchall()
    assert len(rows) == len([d for d in load_checks() if not isinstance(d, tuple)])
    left = {name: text for name, text in rows if text is None or _PLACEHOLDER.search(text)}
    assert left == {}
    stuck = dict(rows)["stuck_non_final"]
    assert "more than 7 days" in stuck
