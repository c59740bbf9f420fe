"""The steps `prefect.yaml` names: where a deployed night runs, and when.

`prefect deploy --all` runs `schedule` as a build step in the checkout: the cron line and
timezone come from recon's own settings (`RECON_SCHEDULE_CRON`, `RECON_TIMEZONE`, or
`recon.toml`; default 02:00 UTC), validated as `recon schedule --show` validates them, so
the schedule has one source. A worker runs `checkout` as the pull step of every flow run:
the run's working directory becomes the checkout this environment's recon is installed from
(`make setup` installs it editable), where `pipelines/nightly.py`, `recon.toml` and the
warehouse's relative paths are. Nothing else needs setting (no `{{ $VAR }}` that is blank
when unset).
"""

from __future__ import annotations

import os
from pathlib import Path

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
    prefect.yaml; the deployment reads `{{ recon-schedule.cron }}` and `.timezone`)."""
    from recon.config.schedule import plan
    from recon.config.settings import load_settings

    settings = load_settings()
    chosen = plan(settings.schedule_cron, settings.timezone)
    print(chosen.describe())
    return {"cron": chosen.cron, "timezone": chosen.timezone}
