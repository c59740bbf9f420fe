"""The nightly run's steps, each callable on its own: extract, load, check, publish, report,
notify, and the retry's refetch and reload (the start and the retry's start are
`recon.night.start`).

`recon.night.table` declares each once as a step of the night (its Prefect task's name, how
its arguments are bound); `recon.night.nightly` runs them in order (`run_night`, in this
process or as `pipelines.nightly`'s Prefect tasks); the CLI's single-step commands
(`recon extract`, `recon load`, …) call them directly. Settings are read inside each step from
the environment plus the non-secret overrides given, so that no secret is ever an argument
(Prefect stores arguments).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeAlias

import duckdb

from recon import logs
from recon.bank.loading import load_bank
from recon.config.overrides import settings_for
from recon.config.settings import Settings, notify_settings
from recon.errors import ConfigError, WarehouseError
from recon.findings.acks import AckLog, acks_path
from recon.findings.trail_table import copy_checked, refresh_acks
from recon.findings.verify import check_before_copy
from recon.ledger.loading import load_books
from recon.money.fx import load_rates
from recon.night import early
from recon.night.extract import (
    Progress,
    ResourceOutcome,
    check_base_url,
    extract_all,
    extract_resource,
    resources_for,
)
from recon.night.outcome import (
    EXIT_ABORTED,
    RunSummary,
    closing_lines,
    errored_checks,
    exit_code_for,
    worst_failed_severity,
)
from recon.warehouse.database import open_readonly
from recon.warehouse.landing import RunLanding
from recon.warehouse.working_copy import (
    LoadResult,
    Warehouse,
    load_run,
)

__all__ = [
    "Overrides",
    "abandon_step",
    "check_step",
    "extract_one_step",
    "extract_step",
    "load_step",
    "notify_abort",
    "notify_step",
    "publish_step",
    "refetch_step",
    "reload_step",
    "report_step",
]

log = logging.getLogger("recon")

Overrides: TypeAlias = Mapping[str, Any] | None


@logs.step("extract")
def extract_step(
    overrides: Mapping[str, Any] | None,
    run_id: str,
    *,
    progress: Progress | None = None,
    payment_methods: bool = False,
    transport: Any = None,
    load_early: bool = False,
) -> list[ResourceOutcome]:
    """Extract every resource of the run on local threads (resumable).

    `load_early`: the load step follows in this process; its load begins now, each resource
    loaded as its extraction ends (`recon.night.early`; not for a resumed run, nor when
    anything goes wrong: the load step then loads the run as it always did)."""
    settings = settings_for(overrides)
    landing = RunLanding(settings.landing, run_id)
    resources = resources_for(settings, payment_methods=payment_methods)
    loader = None
    if load_early and early.enabled() and not landing.states():  # a resumed run: no
        wh = Warehouse(settings.db, settings.duckdb_memory_limit)
        loader = early.start(wh, landing, settings.fields, len(resources))
    try:
        outcomes = extract_all(
            settings,
            landing,
            resources,
            progress=progress,
            transport=transport,
            on_final=loader.extracted if loader is not None else None,
        )
    except BaseException:
        if loader is not None:
            early.abandon(settings.db, run_id)
        raise
    if loader is not None and any(o.fatal for o in outcomes):  # refused: as it always was
        early.abandon(settings.db, run_id)
    elif loader is not None:
        loader.extraction_ended()
    return outcomes


@logs.step("extract")
def extract_one_step(
    overrides: Mapping[str, Any] | None, run_id: str, resource: str
) -> ResourceOutcome:
    """Extract one resource (the unit a Dask worker runs); builds its own client."""
    settings = settings_for(overrides)
    with logs.context(resource=resource):
        return extract_resource(settings, RunLanding(settings.landing, run_id), resource)


@logs.step("load")
def load_step(overrides: Mapping[str, Any] | None, run_id: str, *, publish: bool) -> LoadResult:
    """Load the run's landing into a fresh working copy (published at once if `publish`)."""
    settings = settings_for(overrides)
    check_base_url(settings, RunLanding(settings.landing, run_id))  # every list 404: exit 2
    wh = Warehouse(settings.db, settings.duckdb_memory_limit)
    begun = early.adopt(settings.db, run_id)  # a load begun while extracting, if any
    opened, loaded = (begun.con, begun.loaded) if begun is not None else (None, None)
    with wh.session(run_id, fresh=True, publish=publish, opened=opened) as con:
        landing = RunLanding(settings.landing, run_id)
        result = load_run(con, landing, fields=settings.fields, begun=loaded)
        account = (overrides or {}).get("account")
        load_books(con, settings, run_id, account=account)  # the books, matched (recon.ledger)
        load_bank(con, settings, run_id)  # the bank statements, settlements (recon.bank)
        # The audit trail, checked against its record first (a forged trail is refused).
        copy_checked(con, settings.db, acks_path(settings.db), settings.reports)
        return result


@logs.step("check")
def check_step(
    overrides: Mapping[str, Any] | None, run_id: str | None, *, publish: bool, fresh: bool
) -> list[Any]:
    """Run every check for `run_id` (default: the newest loaded run) in the working copy."""
    from recon.checks import CheckParams, run_checks

    settings = settings_for(overrides)
    wh = Warehouse(settings.db, settings.duckdb_memory_limit)
    owner = run_id or "check"
    with wh.session(owner, fresh=fresh, publish=publish) as con:
        run_id = run_id or _latest_loaded_run(con)
        row = con.execute("SELECT started_at FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if row is None:
            raise WarehouseError(f"run {run_id} is not in the warehouse")
        as_of: datetime = row[0]
        params = CheckParams.from_settings(settings)
        results = list(run_checks(con, run_id=run_id, as_of=as_of, params=params))
        con.execute(
            "UPDATE runs SET finished_at = ? WHERE run_id = ? AND finished_at IS NULL",
            [datetime.now(UTC), run_id],
        )
        return results


@logs.step("publish")
def publish_step(overrides: Mapping[str, Any] | None, run_id: str) -> Path:
    """Publish the working copy and release the run's lock."""
    settings = settings_for(overrides)
    wh = Warehouse(settings.db, settings.duckdb_memory_limit)
    wh.acquire(run_id)
    trail = acks_path(settings.db)
    try:
        with AckLog(trail).locked(create=False):  # no action lands between the copy and the rename
            check_before_copy(settings.db, trail, settings.reports)
            refresh_acks(wh.work_path, trail)  # acks made while the run ran
            wh.publish()
    finally:
        wh.release()
    return settings.db


def abandon_step(overrides: Mapping[str, Any] | None) -> None:
    """Drop the working copy and the lock after a failed run (the published file is untouched).

    Never another live run's: a run refused by its lock leaves that run's copy alone."""
    settings = settings_for(overrides)
    early.abandon(settings.db)  # a load begun while extracting: rolled back, closed
    wh = Warehouse(settings.db, settings.duckdb_memory_limit)
    if not wh.held_by_another():
        wh.discard()
    wh.release()


def _latest_loaded_run(con: Any) -> str:
    row = con.execute(
        "SELECT run_id FROM runs WHERE loaded_at IS NOT NULL ORDER BY started_at DESC LIMIT 1"
    ).fetchone()
    if row is None:
        raise WarehouseError("the warehouse holds no run yet: run `recon nightly` first")
    return str(row[0])


@logs.step("report")
def report_step(
    overrides: Mapping[str, Any] | None, run_id: str | None, *, fail_on: str | None = None
) -> RunSummary:
    """Render reports/<run_id>/ from the published warehouse and sum the run up."""
    from recon.report import render_report

    settings = settings_for(overrides)
    account, group_page = _account_of(overrides)
    con = open_readonly(settings.db, settings.duckdb_memory_limit)
    unwritten: str | None = None
    try:
        run_id = run_id or _latest_loaded_run(con)
        rates = load_rates(settings.fx_rates) if settings.fx_rates else None
        try:
            report_dir: Path | None = render_report(
                con,
                run_id=run_id,
                reports_dir=settings.reports,
                rates=rates,
                csv_dialect=settings.csv_dialect,
                account=account,
                group_page=group_page,
            ).folder
        except OSError as exc:  # a full disk, a folder gone: the warehouse stays as published
            report_dir = None
            where = exc.filename or settings.reports / run_id
            unwritten = (
                f"the report could not be written ({exc.strerror or exc}: {where}); the "
                f"warehouse is published: `recon report --run {run_id}` writes it again"
            )
        except duckdb.Error as exc:  # out of memory reading it (issue 38): one line, no trace
            report_dir = None
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            unwritten = (
                f"the report could not be written ({first}); the warehouse is published: "
                f"raise RECON_DUCKDB_MEMORY_LIMIT and `recon report --run {run_id}` writes it"
            )
        row = con.execute("SELECT status, reason FROM runs WHERE run_id = ?", [run_id]).fetchone()
        status, reason = (str(row[0]), row[1]) if row else ("failed", "run not in warehouse")
        lines = closing_lines(con, run_id)
        worst = worst_failed_severity(con, run_id)
        errored = errored_checks(con, run_id)
    finally:
        con.close()
    code = exit_code_for(
        status, worst_failed=worst, fail_on=fail_on or settings.fail_on, errored=len(errored)
    )
    if errored and status == "complete":  # every list read, but not every check ran
        status = "incomplete"
        reason = f"{len(errored)} check(s) errored and did not run: {', '.join(errored)}"
    if unwritten is not None:
        code = EXIT_ABORTED
        reason = f"{reason}; {unwritten}" if reason else unwritten
        if status == "complete":  # a night without its report is not complete (issue 38)
            status = "incomplete"
            _mark_unreported(settings, run_id, reason)
    return RunSummary(run_id, status, reason, settings.db, report_dir, code, lines, account)


def _mark_unreported(settings: Settings, run_id: str, reason: str) -> None:
    """`runs.status` of a complete night whose report could not be written becomes
    `incomplete`, with the reason (published again; `recon report` can still write it)."""
    try:
        wh = Warehouse(settings.db, settings.duckdb_memory_limit)
        with wh.session(f"report-{run_id}", fresh=True, publish=True) as con:
            con.execute(
                "UPDATE runs SET status = 'incomplete', reason = ? "
                "WHERE run_id = ? AND status = 'complete'",
                [reason, run_id],
            )
    except (WarehouseError, OSError, duckdb.Error) as exc:
        log.warning("could not record in the warehouse that the report failed: %s", exc)


def _account_of(overrides: Mapping[str, Any] | None) -> tuple[str | None, Path | None]:
    """The account of [accounts] a run is, and where the group page goes (None, None
    without [accounts]): its report names the account and links to the group page."""
    account = (overrides or {}).get("account")
    if account is None:
        return None, None
    from recon.config.accounts import group_settings

    return str(account), group_settings(overrides).reports / "group.html"


def notify_step(overrides: Mapping[str, Any] | None, summary: RunSummary) -> str | None:
    """Send the run's alert to RECON_NOTIFY_URL, if set; how it went, in words. Never raises."""
    from recon.night.notify import alert_for, send, wanted

    try:
        settings = settings_for(overrides)
        if settings.notify_url is None:
            return None
        if not wanted(settings.notify_on, exit_code=summary.exit_code):
            return None  # `failure`: a clean night, nothing to look at
        alert = alert_for(summary)
        if not wanted(
            settings.notify_on, exit_code=summary.exit_code, new_findings=alert.new_count
        ):
            return None  # `findings`: a clean night with no new finding
        return send(settings.notify_url, alert, budget_s=settings.notify_budget_s).detail
    except Exception as exc:  # an alert never fails the run
        log.warning("alert for run %s not sent: %s", summary.run_id, type(exc).__name__)
        return None


def notify_abort(
    overrides: Mapping[str, Any] | None, problem: str, exit_code: int = EXIT_ABORTED
) -> None:
    """Alert that a night was aborted before it could report (best effort, never raises);
    `exit_code` is the one the process returns (2 for a bad setting)."""
    from recon.night.notify import Alert, send

    try:
        try:
            settings: Any = settings_for(overrides)
        except ConfigError:  # the bad setting itself: the webhook is read on its own
            settings = notify_settings()
        if settings is not None and settings.notify_url is not None:
            alert = Alert("(not started)", "aborted", exit_code, problem)
            send(settings.notify_url, alert, budget_s=settings.notify_budget_s)
    except Exception as exc:
        log.warning("alert not sent: %s", type(exc).__name__)


@logs.step("refetch")
def refetch_step(
    overrides: Mapping[str, Any] | None, run_id: str, *, transport: Any = None
) -> list[str]:
    """Fetch the run's failed pages again into its landing; returns the new request ids."""
    from recon.night.refetch import refetch_failed

    return refetch_failed(settings_for(overrides), run_id, transport=transport).request_ids


@logs.step("reload")
def reload_step(overrides: Mapping[str, Any] | None, run_id: str) -> str:
    """Load what the retry landed into a fresh working copy under the same run id."""
    from recon.night.refetch import reload_run

    settings = settings_for(overrides)
    status = reload_run(settings, run_id)
    wh = Warehouse(settings.db, settings.duckdb_memory_limit)
    with wh.session(run_id, fresh=False, publish=False) as con:
        load_books(con, settings, run_id, account=(overrides or {}).get("account"))
        load_bank(con, settings, run_id)
        copy_checked(con, settings.db, acks_path(settings.db), settings.reports)
    return status
