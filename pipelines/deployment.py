"""The steps `prefect.yaml` names: where a deployed night runs, and when.

`prefect deploy --all` runs `schedule` as a build step in the checkout: the cron line and
timezone come from recon's own settings (`RECON_SCHEDULE_CRON`, `RECON_TIMEZONE`, or
`recon.toml`; default 02:00 UTC), validated as `recon schedule --show` validates them, so
the schedule has one source; Prefect gets it as the RRULE of the same times
(pipelines.schedules: its scheduler computes no cron schedule on Python < 3.13). A worker
runs `checkout` as the pull step of every flow run:
the run's working directory becomes the checkout this environment's recon is installed from
(`make setup` installs it editable), where `pipelines/nightly.py`, `recon.toml` and the
warehouse's relative paths are. Nothing else needs setting (no `{{ $VAR }}` that is blank
when unset).
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from pipelines.schedules import rrule_for

__all__ = ["checkout", "schedule"]


def checkout() -> dict[str, str]:
    """Pull step: work in the checkout `pipelines` is imported from (its parent folder)."""
    root = Path(__file__).resolve().parent.parent
    if not (root / "pipelines" / "nightly.py").is_file():  # pragma: no cover - a broken install
        raise FileNotFoundError(f"no pipelines/nightly.py under {root}")
    os.chdir(root)
    return {"directory": str(root)}


def schedule() -> dict[str, str]:
    """Build step: the nightly schedule from recon's settings (`id: recon-schedule` in
    prefect.yaml; the deployment reads `{{ recon-schedule.rrule }}` and `.timezone`)."""
    from recon.config.schedule import plan
    from recon.config.settings import load_settings

    settings = load_settings()
    chosen = plan(settings.schedule_cron, settings.timezone)
    print(chosen.describe())
    today = datetime.now(ZoneInfo(chosen.timezone)).date()
    # Prefect 3.9.1's scheduler computes no cron schedule on Python < 3.13: the same
    # times as an RRULE (pipelines.schedules)
    rrule = rrule_for(chosen.cron, since=today)
    return {"cron": chosen.cron, "timezone": chosen.timezone, "rrule": rrule}
