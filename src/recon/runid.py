"""Run ids: sortable, unique, and safe as a folder name (`20261121T020000Z-3fa2c1`)."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime

from recon.errors import ConfigError

__all__ = ["RUN_ID", "check_run_id", "new_run_id"]

RUN_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{6}$")


def new_run_id(now: datetime | None = None) -> str:
    """A sortable, unique run id like `20261121T020000Z-3fa2c1`."""
    now = now or datetime.now(UTC)
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{os.urandom(3).hex()}"


def check_run_id(run_id: str) -> str:
    """Refuse anything that is not a run id (it becomes a folder name)."""
    if not RUN_ID.match(run_id):
        raise ConfigError(
            "RUN_ID", f"{run_id!r} is not a recon run id (like 20261121T020000Z-3fa2c1)"
        )
    return run_id
