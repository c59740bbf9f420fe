"""What the environment and the working folder say around the settings: `RECON_*`
variables recon does not read (a misspelt setting is warned about, never ignored without a
word), and, when there is no warehouse, where recon looked and which setting chose it."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recon.config.settings import Settings, config_path

__all__ = [
    "NOT_SETTINGS",
    "no_warehouse",
    "unknown_variable_warning",
    "unknown_variables",
    "unreported_unknown_variables",
]


#: `RECON_*` variables recon (or its tests and benchmarks) reads that are not settings.
NOT_SETTINGS = frozenset(
    {
        "RECON_CONFIG",  # which settings file (config_path)
        "RECON_EARLY_LOAD",  # recon.night.early: load while extracting (A/B measurements)
        "RECON_EXPORT_ROOT",  # recon export --root
        "RECON_HOME",  # prefect.yaml's pull step (older deployments)
        "RECON_USER",  # who acts, in the audit trail
        "RECON_SANDBOX_API_KEY",  # the key the sandbox accepts (recon.sandbox.credentials)
        "RECON_SANDBOX_BEARER_TOKEN",
        "RECON_RELIABILITY_LOAD",  # tests: the 1M-payment scale tests (make test-scale)
        "RECON_HYPOTHESIS_EXAMPLES",  # tests: property-test examples
        # the workbench's own (recon.workbench.config, read by `recon serve`)
        "RECON_SLA_DAYS_ERROR",
        "RECON_SLA_DAYS_WARN",
        "RECON_SLA_DAYS_INFO",
        "RECON_APPROVAL_THRESHOLD_MINOR",
        "RECON_SESSION_HOURS",
    }
)
# Secrets of accounts and sandbox accounts (`api_key_env = "RECON_EU_API_KEY"`): any name.
_SECRET_SUFFIXES = ("_API_KEY", "_BEARER_TOKEN", "_DATABASE_URL")


def _named_in_file() -> set[str]:
    """The variables recon.toml names (`api_key_env = "RECON_EU_API_KEY"` and the like)."""
    try:
        with config_path().open("rb") as fh:
            data = tomllib.load(fh)
    except (OSError, ValueError):
        return set()
    names: set[str] = set()

    def walk(table: Mapping[str, Any]) -> None:
        for key, value in table.items():
            if isinstance(value, Mapping):
                walk(value)
            elif key.endswith("_env") and isinstance(value, str):
                names.add(value.upper())

    walk(data)
    return names


def unknown_variables(environ: Mapping[str, str] | None = None) -> list[tuple[str, str | None]]:
    """The `RECON_*` variables recon does not read, each with the closest known name (or None):
    a misspelt setting (`RECON_PAGESIZE=500`) would otherwise be ignored without a word."""
    import difflib

    env = os.environ if environ is None else environ
    settings = {f"RECON_{name.upper()}" for name in Settings.model_fields}
    known = sorted(settings | NOT_SETTINGS)
    named: set[str] | None = None
    unknown: list[tuple[str, str | None]] = []
    for name in sorted(env):
        upper = name.upper()
        if not upper.startswith("RECON_") or upper in settings or upper in NOT_SETTINGS:
            continue
        if upper.endswith(_SECRET_SUFFIXES):
            continue
        if named is None:
            named = _named_in_file()
        if upper in named:
            continue
        close = difflib.get_close_matches(upper, known, n=1, cutoff=0.75)
        unknown.append((name, close[0] if close else None))
    return unknown


def no_warehouse(path: Path) -> str:
    """Why there is no warehouse at `path`, in words: where recon looked, which setting chose
    that place, and how to point it elsewhere (a command run outside the checkout looks for
    data/recon.duckdb under the folder it runs in)."""
    where = path.expanduser().absolute()
    default = Settings.model_fields["db"].default
    chosen_by = "--db"
    if where.parent.parent.name == "accounts":  # recon.config.accounts: <db>/accounts/<name>/
        chosen_by = f"account {where.parent.name}'s own warehouse"
    env = next((v for k, v in os.environ.items() if k.upper() == "RECON_DB"), None)
    if env and Path(env).expanduser().absolute() == where:
        chosen_by = "RECON_DB"
    else:
        try:
            with config_path().open("rb") as fh:
                in_file = tomllib.load(fh).get("db")
        except (OSError, ValueError):
            in_file = None
        if isinstance(in_file, str) and Path(in_file).expanduser().absolute() == where:
            chosen_by = f"db in {config_path().absolute()}"
        elif Path(default).absolute() == where:
            chosen_by = f"the default, {default} under the current folder"
    return (
        f"no warehouse at {where} ({chosen_by}); point to one with --db PATH, RECON_DB or "
        f'db = "…" in recon.toml, or build it with `recon nightly`'
    )


_REPORTED: set[str] = set()


def unreported_unknown_variables() -> list[tuple[str, str | None]]:
    """`unknown_variables()` not yet reported in this process (a command warns, then the
    night's start step, which a Prefect worker runs without the command, does not again)."""
    fresh = [(name, close) for name, close in unknown_variables() if name not in _REPORTED]
    _REPORTED.update(name for name, _ in fresh)
    return fresh


def unknown_variable_warning(name: str, close: str | None) -> str:
    """The warning about one unknown `RECON_*` variable, in words."""
    hint = f"; did you mean {close}?" if close else ""
    return f"{name} is not a recon setting (ignored){hint}"
