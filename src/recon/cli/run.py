"""The commands that run the whole nightly job: `nightly` and `schedule` (one step at a time:
recon.cli.steps)."""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from recon.cli.common import (
    BaseUrl,
    DbPath,
    LandingDir,
    ReportsDir,
    app,
    as_overrides,
    configure_logging,
    err,
    guard,
    out,
    progress_display,
    recon_command,
    say,
    tell,
)
from recon.errors import ConfigError, ReconError


@contextlib.contextmanager
def _sandbox(payments: int, faults: str, seed: int, day: int = 0) -> Iterator[str]:
    """Start the bundled sandbox on 127.0.0.1; yields its base URL.

    The run then reads the sandbox's credentials where the sandbox does (`credentials:
    sandbox` in the overrides): no secret is passed around, nor written into the environment.
    """
    from recon.sandbox.app import SandboxConfig
    from recon.sandbox.credentials import sandbox_credentials
    from recon.sandbox.server import serve_in_thread

    key, token = sandbox_credentials()
    config = SandboxConfig(
        seed=seed, payments=payments, faults=faults, api_key=key, bearer_token=token, day=day
    )
    say(
        f"sandbox: {payments:,} payments, faults={faults}, seed={seed}, day {day} "
        f"({'kept still' if faults == 'none' else 'moves on each night'}) on 127.0.0.1"
    )
    with serve_in_thread(config) as base_url:
        yield base_url


def _sandbox_day(seed: int, payments: int, faults: str, overrides: dict[str, Any]) -> int:
    """This night's sandbox day (recon.sandbox.life): one more than the last night's beside
    the warehouse, the same with `--sandbox-faults none`."""
    from recon.night.nightly import settings_for
    from recon.sandbox.life import next_day

    folder = settings_for(overrides).db.parent
    return next_day(folder, seed, payments, still=faults == "none")


def _sandbox_books(
    seed: int, payments: int, overrides: dict[str, Any], day: int = 0
) -> dict[str, Any]:
    """The sandbox's books beside the warehouse, so that the demo reconciles them too; but
    the user's own books (RECON_LEDGER_*, `[ledger.*]` in recon.toml) win, and it says so."""
    from recon.ledger.sources import resolve_sources
    from recon.night.nightly import settings_for
    from recon.sandbox.ledger.files import sandbox_ledger

    settings = settings_for(overrides)
    own = resolve_sources(settings)
    if own:
        say(
            "sandbox: reconciling your books (" + ", ".join(s.setting for s in own) + "), "
            "not the sandbox's"
        )
        return {}
    return sandbox_ledger(seed, payments, settings.db.parent, day)


def _sandbox_bank(seed: int, payments: int, overrides: dict[str, Any]) -> dict[str, Any]:
    """The sandbox's bank statements beside the warehouse, so that the demo reconciles the
    bank leg too; the user's own RECON_BANK_STATEMENTS wins, and it says so."""
    from recon.night.nightly import settings_for
    from recon.sandbox.bank import sandbox_bank

    settings = settings_for(overrides)
    if settings.bank_statements:
        say(f"sandbox: reconciling your bank statements ({settings.bank_statements})")
        return {}
    try:
        return sandbox_bank(seed, payments, settings.db.parent)
    except (ValueError, IndexError):  # too few payments for a statement with every plant
        return {}


@contextlib.contextmanager
def locked(overrides: dict[str, Any]) -> Iterator[None]:
    """The warehouse's night lock (`recon.nightlock`) around a step command."""
    from recon.night.nightly import settings_for
    from recon.warehouse.nightlock import night_lock

    with night_lock(settings_for(overrides).db):
        yield


@app.command()
def nightly(
    base_url: BaseUrl = None,
    db: DbPath = None,
    reports: ReportsDir = None,
    landing: LandingDir = None,
    sandbox: Annotated[
        bool, typer.Option("--sandbox", help="Run against the bundled sandbox API on 127.0.0.1.")
    ] = False,
    sandbox_payments: Annotated[
        int, typer.Option(help="Payments in the sandbox (with --sandbox).", min=1)
    ] = 20_000,
    sandbox_faults: Annotated[
        str,
        typer.Option(
            help="Sandbox fault profile (with --sandbox). The sandbox lives: each night moves "
            "on from the last (new payments, refunds, status changes, books fixed); `none` "
            "keeps it still."
        ),
    ] = "flaky",
    sandbox_seed: Annotated[int, typer.Option(help="Sandbox data seed (with --sandbox).")] = 7,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            help="Resume a killed run without refetching its landed pages: "
            "`--resume` (the newest) or `--resume RUN_ID`.",
        ),
    ] = None,
    retry_failed: Annotated[
        str | None,
        typer.Option(
            "--retry-failed",
            help="Finish an incomplete run: fetch only its failed pages again, load them "
            "into it, check, re-publish: `--retry-failed` (the newest incomplete run) or "
            "`--retry-failed RUN_ID`.",
        ),
    ] = None,
    fail_on: Annotated[
        Literal["error", "warn", "info"] | None,
        typer.Option(help="Exit 4 when a check of this severity or worse finds something."),
    ] = None,
    payment_methods: Annotated[
        bool, typer.Option("--payment-methods", help="Also list customers' payment methods.")
    ] = False,
    task_runner: Annotated[
        Literal["threads", "dask"],
        typer.Option(help="Run extraction on local threads or on a Dask cluster."),
    ] = "threads",
    dask_address: Annotated[
        str | None,
        typer.Option(help="Dask scheduler address (default: a local cluster)."),
    ] = None,
    accept_books: Annotated[
        list[str] | None,
        typer.Option(
            "--accept-books",
            help="Accept a books input (orders, refunds, invoices) that holds far fewer rows "
            "than last night for this night; needs --note (kept in the audit trail).",
        ),
    ] = None,
    note: Annotated[
        str | None, typer.Option("--note", help="Why the books input is accepted (audited).")
    ] = None,
    accept_for: Annotated[
        list[str] | None,
        typer.Option(
            "--account",
            help="With [accounts] in recon.toml: the account whose books --accept-books "
            "accepts (repeatable); every account runs, no other's books are accepted.",
        ),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging.")] = False,
) -> None:
    """Run the whole nightly job: extract, land, load, check, report.

    Exit codes: 0 complete, 3 finished but incomplete (failed calls; the report is still
    written), 1 aborted (auth refused, warehouse unusable, …), 2 bad setting or argument,
    4 findings at or above --fail-on.
    """
    configure_logging(verbose)
    overrides = as_overrides(base_url=base_url, db=db, reports=reports, landing=landing)

    stop = _StopOnRequest(overrides)

    def run() -> int:
        try:
            with stop.installed():  # before Prefect or any thread: the flow has its own thread
                return go()
        except ReconError as exc:  # stopped before the flow began: the flow alerts after
            if stop.signum is not None:  # a StoppedError: the night ended itself after a signal
                return stop.stopped()
            if not started:
                from recon.night.nightly import notify_abort

                code = 2 if isinstance(exc, ConfigError) else 1  # what `guard` returns
                problem = f"bad setting {exc}" if code == 2 else str(exc)
                notify_abort(overrides, problem, code)
            raise

    started = False

    def go() -> int:
        nonlocal started
        from recon.config.overrides import settings_for
        from recon.orchestrator import NightlyOptions, load_orchestrator
        from recon.warehouse.nightlock import night_lock

        first = settings_for(overrides)  # a bad setting stops here, before Prefect or any request
        if note is not None and not accept_books:
            raise ConfigError("--note", "goes with --accept-books INPUT")
        announce = say if verbose or task_runner == "dask" else (lambda _m: None)
        if names := configured_accounts(overrides):  # [accounts] in recon.toml: every account
            from recon.cli.group import accepted_books, run_group_night

            accepting = accepted_books(names, accept_books or [], accept_for or [])
            return run_group_night(
                overrides,
                accepting=accepting,
                note=note,
                sandbox=sandbox,
                resume=resume,
                retry_failed=retry_failed,
                fail_on=fail_on,
                payment_methods=payment_methods,
                task_runner=task_runner,
                dask_address=dask_address,
                announce=announce,
            )
        if accept_for:
            raise ConfigError("--account", "only with [accounts] in recon.toml")
        if resume and retry_failed:
            raise ConfigError("--retry-failed", "cannot be combined with --resume")
        with contextlib.ExitStack() as stack:
            # one night per warehouse: a second one is refused before it touches anything
            stack.enter_context(night_lock(first.db))
            # The orchestrator's server boots (seconds of CPU in its own process) while the
            # checks below run; a check that fails stops it unused (issue 23).
            orchestrator = load_orchestrator()
            stack.enter_context(orchestrator.session(announce))
            from recon.night.nightly import preflight, resolve_resume
            from recon.night.refetch import resolve_retry

            if sandbox:
                day = _sandbox_day(sandbox_seed, sandbox_payments, sandbox_faults, overrides)
                url = stack.enter_context(
                    _sandbox(sandbox_payments, sandbox_faults, sandbox_seed, day)
                )
                overrides.update(base_url=url, credentials="sandbox")
                overrides.update(_sandbox_books(sandbox_seed, sandbox_payments, overrides, day))
                overrides.update(_sandbox_bank(sandbox_seed, sandbox_payments, overrides))
            settings = preflight(overrides, probe_api=True)  # before the flow starts
            if accept_books:
                from recon.ledger.loading import accept_books as accept

                trail = accept(settings, accept_books, note)
                say(f"accepted books {', '.join(accept_books)} for this night (audit: {trail[0]})")
            if retry_failed:  # refused here, before the flow starts, when it cannot be done
                retry_failed_run = resolve_retry(settings, retry_failed)
            options = NightlyOptions(
                trigger="sandbox" if sandbox else "cli",
                resume=resolve_resume(settings, resume) if resume else None,
                fail_on=fail_on,
                payment_methods=payment_methods,
                task_runner=task_runner,
                dask_address=dask_address,
                retry_failed=retry_failed_run if retry_failed else None,
            )
            stack.enter_context(progress_display(enabled=True))
            started = True
            try:
                summary = orchestrator.run_nightly(overrides, options)
            except ReconError:
                if stop.signum is not None:  # say it now: stopping the server takes a while
                    stop.stopped()
                raise
        print_summary(summary)
        return int(summary.exit_code)

    code = guard(run)
    raise typer.Exit(code)


#: How long a stopped night may take to end by itself (the scans land what they hold, the
#: flow run ends Cancelled) before it is ended for it; docs/deployment.md: over within 5 s.
STOP_GRACE_S = 3.0


class _StopOnRequest:
    """SIGINT and SIGTERM end the night within seconds (docs/deployment.md).

    The first signal asks the scans to stop after their page (`STOPPING`): they land what
    they hold, the flow returns Cancelled, and `recon nightly` says in one line how to
    resume, exit 130 (SIGINT) or 143 (SIGTERM). Nothing is raised into the running code, so
    Prefect reports no crash. Requests in flight are not waited for beyond `STOP_GRACE_S`
    (nor a second signal): then the line is said and the process ends at once — landed
    pages are fsync'd files, the published warehouse is swapped in whole or not at all, and
    the Prefect server recon started dies with it (`PR_SET_PDEATHSIG`)."""

    def __init__(self, overrides: dict[str, Any]) -> None:
        self.overrides = overrides
        self.signum: int | None = None
        self._said = threading.Lock()

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """The handlers for the night, the previous ones after it (off the main thread, as
        under a test runner's thread, none: signals only reach the main thread's)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {s: signal.signal(s, self._requested) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _requested(self, signum: int, frame: Any) -> None:
        from recon.night.extract import STOPPING

        again = self.signum is not None
        self.signum = self.signum or signum
        STOPPING.set()
        if again:
            self._end_now()
        timer = threading.Timer(STOP_GRACE_S, self._end_now)
        timer.daemon = True
        timer.start()

    def _end_now(self) -> None:
        """The grace is over (or a second signal came): say it if not yet said, and end."""
        code = self.stopped()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    def stopped(self) -> int:
        """Say, once, how to go on; the exit code of the signal (130, 143)."""
        if self._said.acquire(blocking=False):
            logging.disable(logging.CRITICAL)  # the last line: nothing after it (a server's
            _say_stopped(self.overrides)  # stop, a flush of its queues) is the user's business
        return 128 + (self.signum or signal.SIGINT)


def _say_stopped(overrides: dict[str, Any]) -> None:
    """One line for a night stopped by a signal: what was landed is kept for --resume."""
    run_id = ""
    with contextlib.suppress(Exception):  # stopped before settings or a landing existed
        from recon.night.nightly import settings_for
        from recon.warehouse.landing import RunLanding

        run_id = RunLanding.latest(settings_for(overrides).landing) or ""
    if not run_id:
        err.print("recon: stopped before the night landed anything", markup=False)
        return
    err.print(
        f"recon: stopped: the night was interrupted; its landed pages are kept: "
        f"go on with `recon nightly --resume {run_id}`",
        markup=False,
        highlight=False,
    )


def configured_accounts(overrides: dict[str, Any]) -> list[str]:
    from recon.config.accounts import account_names

    return account_names(overrides)


def print_summary(summary: Any) -> None:
    colour = {"complete": "green", "incomplete": "yellow"}.get(summary.status, "red")
    account = getattr(summary, "account", None)
    who = f"account {account}, " if account else ""
    out.print(
        f"\n{who}run {summary.run_id}: [bold {colour}]{summary.status}[/]",
        highlight=False,
    )
    if summary.reason:
        out.print(f"  {summary.reason}", markup=False, highlight=False)
    for line in summary.lines:
        out.print(line, markup=False, highlight=False)
    db = Path(summary.db_path).resolve()
    out.print(f"\nwarehouse: {db}", highlight=False, markup=False)
    if summary.report_dir:
        folder = Path(summary.report_dir).resolve()
        out.print(f"report:    {folder / 'report.html'}", highlight=False, markup=False)
        out.print(f"summary:   {folder / 'summary.json'}", highlight=False, markup=False)
    sql = (  # a run id is [0-9TZ-a-f] only (recon.warehouse.landing.check_run_id)
        "SELECT check_name, status, finding_count FROM check_runs "  # noqa: S608
        f"WHERE run_id = '{summary.run_id}' ORDER BY check_name"
    )
    where = f"--account {account}" if account else f"--db {shlex.quote(str(db))}"
    command = f"query {_double_quoted(sql)} {where}"
    out.print(f"query it:  {recon_command()} {command}", highlight=False, markup=False)
    # what now: the report's first screen names the same two commands
    for label, step in (("work it:", "findings list"), ("", "findings export worklist.xlsx")):
        out.print(f"{label:<10} {recon_command()} {step} {where}", highlight=False, markup=False)


def _double_quoted(text: str) -> str:
    """`text` as one shell word, in double quotes when that is safe (readable SQL)."""
    if any(c in text for c in '"$`\\!'):
        return shlex.quote(text)
    return f'"{text}"'


@app.command()
def schedule(
    cron: Annotated[str | None, typer.Option(help="Cron line (RECON_SCHEDULE_CRON).")] = None,
    timezone: Annotated[str | None, typer.Option(help="IANA zone (RECON_TIMEZONE).")] = None,
    show: Annotated[
        bool, typer.Option("--show", help="Print the schedule and its next runs, then exit.")
    ] = False,
) -> None:
    """Serve the nightly flow on a cron schedule (default 02:00, DST-safe, in RECON_TIMEZONE)."""

    def go() -> int:
        from recon.config.schedule import plan
        from recon.config.settings import load_settings
        from recon.orchestrator import load_orchestrator

        settings = load_settings(**as_overrides(schedule_cron=cron, timezone=timezone))
        chosen = plan(settings.schedule_cron, settings.timezone)
        out.print(chosen.describe(), highlight=False, markup=False)
        if show:
            return 0
        load_orchestrator().serve_schedule(chosen, tell)
        return 0

    raise typer.Exit(guard(go))
