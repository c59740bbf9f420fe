"""Before the night's first request: every check that can fail (`preflight`), the run's
landing folder created or reopened (`start_step`, `resolve_resume`), and for
`--retry-failed` the run to finish (`retry_start_step`).

The night's first steps (`recon.night.table`); `recon nightly` also calls `preflight` and
`resolve_resume` before it hands the night to its orchestrator.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from recon.bank.loading import validate_bank
from recon.config.environment import unknown_variable_warning, unreported_unknown_variables
from recon.config.overrides import settings_for
from recon.config.settings import Settings
from recon.errors import ConfigError
from recon.ledger.loading import validate_books
from recon.money.fx import load_rates
from recon.night import reach
from recon.runid import check_run_id, new_run_id
from recon.warehouse.landing import RunLanding
from recon.warehouse.working_copy import check_readable

__all__ = ["preflight", "resolve_resume", "retry_start_step", "start_step"]

log = logging.getLogger("recon")


def start_step(
    overrides: Mapping[str, Any] | None,
    *,
    resume: str | None = None,
    trigger: str = "cli",
    probe_api: bool = True,
) -> str:
    """Validate settings (before any request) and create or reopen the run's landing folder.

    `resume` is a run id, or "latest" for the newest landing folder. Returns the run id.
    `probe_api=False` skips the reachability probe (a test's in-process transport).
    """
    settings = preflight(overrides, probe_api=probe_api)
    for name, close in unreported_unknown_variables():  # a worker's night: no command warned
        log.warning("%s", unknown_variable_warning(name, close))
    if resume:
        run_id = resolve_resume(settings, resume)
        log.info("resuming run %s from %s", run_id, settings.landing / run_id)
        return run_id
    run_id = new_run_id()
    landing = RunLanding(settings.landing, run_id)
    landing.create(
        {
            "started_at": datetime.now(UTC).isoformat(),
            "base_url": settings.base_url,
            "trigger": trigger,
            "page_size": settings.page_size,
        }
    )
    return run_id


def resolve_resume(settings: Settings, resume: str) -> str:
    """The landed run `--resume` names ("latest": the newest); a ConfigError otherwise."""
    run_id = RunLanding.latest(settings.landing) if resume == "latest" else resume
    if not run_id:
        raise ConfigError("--resume", f"no earlier run to resume under {settings.landing}")
    try:
        landing = RunLanding(settings.landing, check_run_id(run_id))
    except ConfigError as exc:
        raise ConfigError("--resume", exc.problem) from None
    if not landing.exists:
        raise ConfigError("--resume", f"no landed run {run_id} under {settings.landing}")
    return run_id


def preflight(overrides: Mapping[str, Any] | None, *, probe_api: bool = False) -> Settings:
    """Every check that can fail before a request: settings, credentials, writable paths;
    with `probe_api`, that something listens at the base URL (`recon.night.reach`)."""
    settings = settings_for(overrides)
    settings.require_remote_ready()
    _check_writable(settings)
    check_readable(settings.db)  # a damaged warehouse stops the night here, not after it
    validate_books(settings)  # a missing books file or column stops the run here
    validate_bank(settings)  # so do bank statements named but not there
    if settings.fx_rates is not None:
        load_rates(settings.fx_rates)  # a bad rates file too, not the report at the end
    if probe_api:
        reach.probe(settings.api_root)  # nothing there: abort in seconds, not an incomplete night
    return settings


def _check_writable(settings: Settings) -> None:
    for name, folder in (
        ("RECON_DB", settings.db.parent),
        ("RECON_LANDING", settings.landing),
        ("RECON_REPORTS", settings.reports),
    ):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(name, f"cannot create {folder}: {exc.strerror}") from None
        probe = folder / f".recon-write-probe-{datetime.now(UTC).timestamp()}"
        try:
            probe.touch()
            probe.unlink()
        except OSError as exc:
            raise ConfigError(name, f"{folder} is not writable: {exc.strerror}") from None
    if settings.db.exists() and settings.db.is_dir():
        raise ConfigError("RECON_DB", f"{settings.db} is a folder, not a DuckDB file")


def retry_start_step(
    overrides: Mapping[str, Any] | None, retry: str | None, *, probe_api: bool = True
) -> str:
    """`--retry-failed`: check settings and the API, then the run to finish (refused with
    the reason when it cannot be: complete, unknown, or a newer run published over it)."""
    from recon.night.refetch import resolve_retry

    settings = preflight(overrides, probe_api=probe_api)
    return resolve_retry(settings, retry)
