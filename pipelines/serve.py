"""`recon schedule`: serve the nightly flow on a cron schedule.

Prefect's temporary server runs no scheduler (docs/facts.md "Prefect"), so this uses the server at
`PREFECT_API_URL` when one is configured, and otherwise starts a standing local one on
127.0.0.1:4200 with its services and says so (`pipelines.server`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from pipelines.schedules import rrule_for
from pipelines.server import STANDING_PORT, prefect_server
from recon.config.schedule import Plan


def serve(plan: Plan, *, say: Callable[[str], None]) -> None:
    """Serve the nightly flow on the plan's schedule until interrupted."""
    with prefect_server(say, services=True, port=STANDING_PORT):
        from prefect.schedules import RRule

        from recon.config.accounts import account_names

        # Prefect 3.9.1's scheduler computes no cron schedule on Python < 3.13: the same
        # times as an RRULE (pipelines.schedules)
        today = datetime.now(ZoneInfo(plan.timezone)).date()
        schedule = RRule(rrule_for(plan.cron, since=today), timezone=plan.timezone)

        if account_names():  # [accounts] in recon.toml: every account, side by side
            from pipelines.group import group_nightly

            group_nightly.serve(
                name="recon-group-nightly",
                schedule=schedule,
                parameters={"trigger": "schedule"},
            )
            return
        from pipelines.nightly import nightly

        nightly.serve(
            name="recon-nightly",
            schedule=schedule,
            parameters={"trigger": "schedule"},
        )
