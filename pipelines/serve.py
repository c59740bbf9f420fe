"""`recon schedule`: serve the nightly flow on a cron schedule.

Prefect's temporary server runs no scheduler (docs/facts.md "Prefect"), so this uses the server at
`PREFECT_API_URL` when one is configured, and otherwise starts a standing local one on
127.0.0.1:4200 with its services and says so (`pipelines.server`).
"""

from __future__ import annotations

from collections.abc import Callable

from pipelines.server import STANDING_PORT, prefect_server
from recon.config.schedule import Plan


def serve(plan: Plan, *, say: Callable[[str], None]) -> None:
    """Serve the nightly flow on the plan's schedule until interrupted."""
    with prefect_server(say, services=True, port=STANDING_PORT):
        from prefect.schedules import Cron

        from recon.config.accounts import account_names

        if account_names():  # [accounts] in recon.toml: every account, side by side
            from pipelines.group import group_nightly

            group_nightly.serve(
                name="recon-group-nightly",
                schedule=Cron(plan.cron, timezone=plan.timezone),
                parameters={"trigger": "schedule"},
            )
            return
        from pipelines.nightly import nightly

        nightly.serve(
            name="recon-nightly",
            schedule=Cron(plan.cron, timezone=plan.timezone),
            parameters={"trigger": "schedule"},
        )
