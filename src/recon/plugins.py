"""What recon finds through entry points instead of importing it: the seams of the library.

- `recon.orchestrator`: the orchestrator that runs the nightly (`pipelines`, Prefect), so the
  library never imports Prefect (`recon.orchestrator`).
- `recon.credentials`: named credential providers, e.g. `sandbox` — the key and token the
  bundled sandbox accepts (`recon nightly --sandbox`) — so production code never imports the
  sandbox to run against it.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from recon.errors import ConfigError

__all__ = ["CREDENTIALS_GROUP", "load_plugin"]

CREDENTIALS_GROUP = "recon.credentials"


def load_plugin(group: str, name: str, *, setting: str) -> Any:
    """The object installed as `name` in the entry-point `group` (a ConfigError naming
    `setting` when none is installed)."""
    for entry in entry_points(group=group, name=name):
        return entry.load()
    raise ConfigError(
        setting, f"no {name!r} entry point in group {group!r}: reinstall recon (make setup)"
    )
