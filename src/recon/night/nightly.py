"""The nightly run in order, without Prefect: start → extract → load → check → publish →
report → notify, and the retry of a night's failed pages (`run_night`, `retry_night`).

They call the steps of `recon.night.table` (`Steps`): `LocalSteps` runs them in this
process, `pipelines.nightly` as Prefect tasks. The steps themselves are `recon.night.steps`
and `recon.night.start`, re-exported here.
"""

from __future__ import annotations

import httpx

from recon.config.overrides import settings_for
from recon.errors import ConfigError
from recon.night.extract import Progress, ResourceOutcome
from recon.night.outcome import (
    EXIT_ABORTED,
    EXIT_COMPLETE,
    EXIT_FINDINGS,
    EXIT_INCOMPLETE,
    EXIT_USAGE,
    RunSummary,
    exit_code_for,
)
from recon.night.start import preflight, resolve_resume, retry_start_step, start_step
from recon.night.steps import (
    Overrides,
    abandon_step,
    check_step,
    extract_one_step,
    extract_step,
    load_step,
    notify_abort,
    notify_step,
    publish_step,
    refetch_step,
    reload_step,
    report_step,
)
from recon.night.table import LocalSteps, Steps
from recon.warehouse.memory import quiet_collector
from recon.warehouse.nightlock import night_lock

__all__ = [
    "EXIT_ABORTED",
    "EXIT_COMPLETE",
    "EXIT_FINDINGS",
    "EXIT_INCOMPLETE",
    "EXIT_USAGE",
    "LocalSteps",
    "Overrides",
    "RunSummary",
    "Steps",
    "check_step",
    "exit_code_for",
    "extract_one_step",
    "extract_step",
    "load_step",
    "notify_abort",
    "notify_step",
    "preflight",
    "publish_step",
    "refetch_step",
    "reload_step",
    "report_step",
    "resolve_resume",
    "retry_local",
    "retry_night",
    "retry_start_step",
    "run_local",
    "run_night",
    "settings_for",
    "start_step",
]


def run_night(
    steps: Steps,
    overrides: Overrides,
    *,
    resume: str | None = None,
    trigger: str = "cli",
    fail_on: str | None = None,
    payment_methods: bool = False,
) -> RunSummary:
    """The night, in order — written once, run by `run_local`, the flows and the retry:
    start → extract → load → check → publish → report → notify. A failure after the start
    drops the working copy and the lock; every failure is alerted before it is raised.
    One night per warehouse (`night_lock`, re-entrant: the CLI holds it already)."""
    quiet_collector()  # a night allocates millions of short-lived objects (recon.warehouse.memory)
    with night_lock(settings_for(overrides).db):
        return _night(steps, overrides, resume, trigger, fail_on, payment_methods)


def _night(
    steps: Steps,
    overrides: Overrides,
    resume: str | None,
    trigger: str,
    fail_on: str | None,
    payment_methods: bool,
) -> RunSummary:
    try:
        run_id = steps.start(overrides, resume, trigger)
    except BaseException as exc:
        notify_abort(overrides, f"the night did not start: {exc}")
        raise
    try:
        outcomes = steps.extract(overrides, run_id, payment_methods)
        steps.load(overrides, run_id)
        steps.check(overrides, run_id)
        steps.publish(overrides, run_id)
    except BaseException as exc:
        abandon_step(overrides)
        if isinstance(exc, ConfigError):  # found only once the API answered (every list 404)
            notify_abort(overrides, f"run {run_id} aborted: bad setting {exc}", EXIT_USAGE)
        else:
            notify_abort(overrides, f"run {run_id} aborted: {exc}")
        raise
    return _reported(steps, overrides, run_id, fail_on, outcomes)


def retry_night(
    steps: Steps, overrides: Overrides, retry: str, *, fail_on: str | None = None
) -> RunSummary:
    """`--retry-failed`, in order: the run to finish → its failed pages fetched again →
    reloaded under its id → checked → published → report → notify."""
    with night_lock(settings_for(overrides).db):
        return _retry(steps, overrides, retry, fail_on)


def _retry(steps: Steps, overrides: Overrides, retry: str, fail_on: str | None) -> RunSummary:
    run_id = steps.retry_start(overrides, retry)
    try:
        steps.refetch(overrides, run_id)
        steps.reload(overrides, run_id)
        steps.check(overrides, run_id)
        steps.publish(overrides, run_id)
    except BaseException as exc:
        abandon_step(overrides)
        notify_abort(overrides, f"retry of run {run_id} aborted: {exc}")
        raise
    return _reported(steps, overrides, run_id, fail_on, [])


def _reported(
    steps: Steps,
    overrides: Overrides,
    run_id: str,
    fail_on: str | None,
    outcomes: list[ResourceOutcome],
) -> RunSummary:
    summary = steps.report(overrides, run_id, fail_on)
    steps.reported(summary, outcomes)
    steps.notify(overrides, summary)
    return summary


def retry_local(
    overrides: Overrides,
    retry: str | None = None,
    *,
    fail_on: str | None = None,
    transport: httpx.BaseTransport | None = None,
) -> RunSummary:
    """`recon nightly --retry-failed` in this process, without Prefect (tests)."""
    return retry_night(
        LocalSteps(transport=transport), overrides, retry or "latest", fail_on=fail_on
    )


def run_local(
    overrides: Overrides,
    *,
    resume: str | None = None,
    trigger: str = "local",
    fail_on: str | None = None,
    payment_methods: bool = False,
    progress: Progress | None = None,
    transport: httpx.BaseTransport | None = None,
) -> RunSummary:
    """The night's steps in order, in this process, without Prefect (tests, benchmarks)."""
    return run_night(
        LocalSteps(progress=progress, transport=transport),
        overrides,
        resume=resume,
        trigger=trigger,
        fail_on=fail_on,
        payment_methods=payment_methods,
    )
