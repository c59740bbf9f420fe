"""One night for every account of `[accounts]` (recon.config.accounts), side by side.

Each account runs today's single-account night (`recon.night.nightly.run_local`, reached through
the override `account: <name>`): its own client and rate limiter, its own landing, its own
warehouse (one writer each, so no account waits on another's load), its own report. An
account that fails — key refused, nothing listening, a bad books file found late — is an
outcome, never an exception: the others finish. Then the night as a whole:

- the consolidated warehouse over the accounts' published files (`recon.warehouse.consolidated`);
- the group page, `reports/group.html` (`recon.accounts.report`), linking to each report;
- one alert naming every account (the accounts send none of their own);
- the exit code: the worst account's (2 a bad setting found late > 1 aborted or failed >
  3 incomplete > 4 findings at `--fail-on` > 0).

`run_group_local` runs each account in a process of its own (`recon.accounts.processes`: more
than one account, more than one core; else on threads here); `pipelines.group` runs the
same `run_account` as one Prefect task per account, each in a process of its own likewise,
or spread over Dask workers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recon.accounts.outcome import AccountOutcome, GroupSummary, worst_exit_code
from recon.errors import ConfigError, ReconError
from recon.night.notify import Alert
from recon.night.outcome import EXIT_ABORTED, EXIT_USAGE

__all__ = [
    "AccountOutcome",
    "AccountProgress",
    "GroupAlert",
    "GroupSummary",
    "account_overrides",
    "finish_group",
    "group_preflight",
    "run_account",
    "run_account_where",
    "run_group_local",
    "worst_exit_code",
]

log = logging.getLogger("recon.accounts")


class AccountProgress:
    """The running command's progress display, each resource named `<account>/<resource>`."""

    def __init__(self, account: str, inner: Any) -> None:
        self.account = account
        self.inner = inner

    def update(self, resource: str, **counts: Any) -> None:
        self.inner.update(f"{self.account}/{resource}", **counts)

    def done(self, resource: str, *, status: str) -> None:
        self.inner.done(f"{self.account}/{resource}", status=status)


def account_overrides(overrides: Mapping[str, Any] | None, name: str) -> dict[str, Any]:
    """The overrides that make a step run as account `name` (never a secret)."""
    values = {k: v for k, v in (overrides or {}).items() if k != "credentials"}
    values["account"] = name
    return values


def group_preflight(overrides: Mapping[str, Any] | None) -> list[str]:
    """Every account's settings, credentials, paths and books, before any request.

    Returns the accounts; a bad entry is a ConfigError naming the account and the setting.
    """
    from recon.config.accounts import account_names, group_settings, in_account
    from recon.night.nightly import preflight

    names = account_names(overrides)
    top = group_settings(overrides)
    owners: dict[Path, str] = {top.db.resolve(): "the consolidated warehouse (RECON_DB)"}
    for name in names:
        try:
            settings = preflight(account_overrides(overrides, name), probe_api=False)
        except ConfigError as exc:  # a books file, a folder: said as this account's
            raise in_account(name, exc) from None
        for key in ("db", "landing", "reports"):  # one writer each: nothing shared
            path = Path(getattr(settings, key)).resolve()
            if key == "reports" and path == top.reports.resolve():
                owners.setdefault(path, "the group's reports")
            if path in owners:
                raise ConfigError(f"[accounts.{name}] {key}", f"{path} is already {owners[path]}'s")
            owners[path] = f"account {name}"
    return names


def _published_run(db: Path, run_id: str) -> bool:
    from recon.warehouse.database import open_readonly

    if not db.is_file():
        return False
    con = open_readonly(db)
    try:
        row = con.execute(
            "SELECT loaded_at IS NOT NULL FROM runs WHERE run_id = ?", [run_id]
        ).fetchone()
    finally:
        con.close()
    return bool(row and row[0])


def _retry(values: dict[str, Any], settings: Any, fail_on: str | None, transport: Any) -> Any:
    from recon.night import nightly as steps
    from recon.night.refetch import resolve_retry

    try:
        run_id = resolve_retry(settings, "latest")
    except ConfigError as exc:  # nothing to finish: the account stays as its last night left it
        log.info("account %s: %s", values.get("account"), exc.problem)
        return steps.report_step(values, None, fail_on=fail_on)
    return steps.retry_local(values, run_id, fail_on=fail_on, transport=transport)


def run_account(
    overrides: Mapping[str, Any] | None,
    name: str,
    *,
    resume: bool = False,
    retry_failed: bool = False,
    trigger: str = "cli",
    fail_on: str | None = None,
    payment_methods: bool = False,
    transport: Any = None,
) -> AccountOutcome:
    """Account `name`'s whole night; its failure is its outcome, never an exception.

    With `resume`, the account's newest landed run goes on where it stopped (or, when it
    was published already, is only reported again); an account with none starts afresh.
    With `retry_failed`, the account's newest incomplete run has its failed pages fetched
    again (`recon nightly --retry-failed`); an account with nothing to finish is only
    reported again.
    """
    from recon.night import nightly as steps
    from recon.warehouse.landing import RunLanding

    values = account_overrides(overrides, name)
    db: Path | None = None
    log.info("account %s: night starting", name)
    try:
        settings = steps.settings_for(values)
        db = settings.db
        resume_id = RunLanding.latest(settings.landing) if resume else None
        if retry_failed:
            summary = _retry(values, settings, fail_on, transport)
        elif resume_id and _published_run(settings.db, resume_id):
            summary = steps.report_step(values, resume_id, fail_on=fail_on)
        else:
            from recon.night import progress

            shown = progress.current()  # the command's display, when in its process
            summary = steps.run_local(
                values,
                resume=resume_id,
                trigger=trigger,
                fail_on=fail_on,
                payment_methods=payment_methods,
                progress=AccountProgress(name, shown) if shown is not None else None,
                transport=transport,
            )
    except ConfigError as exc:
        from recon.config.accounts import in_account

        exc = in_account(name, exc)
        log.warning("account %s: bad setting %s", name, exc)
        return AccountOutcome(name, "aborted", EXIT_USAGE, reason=f"bad setting {exc}", db_path=db)
    except ReconError as exc:
        log.warning("account %s: aborted: %s", name, exc)
        reason = _account_words(overrides, name, str(exc))
        return AccountOutcome(name, "aborted", EXIT_ABORTED, reason=reason, db_path=db)
    except Exception as exc:  # one account's bug must not take the others down
        log.exception("account %s: aborted", name)
        return AccountOutcome(
            name, "aborted", EXIT_ABORTED, reason=f"{type(exc).__name__}: {exc}", db_path=db
        )
    log.info(
        "account %s: %s (exit %s), run %s", name, summary.status, summary.exit_code, summary.run_id
    )
    return AccountOutcome(
        name,
        summary.status,
        int(summary.exit_code),
        run_id=summary.run_id,
        reason=_account_words(overrides, name, summary.reason),
        db_path=summary.db_path,
        report_dir=summary.report_dir,
        lines=list(summary.lines),
    )


def _account_words(overrides: Mapping[str, Any] | None, name: str, text: str | None) -> str | None:
    """`text` with the single-account setting names (RECON_API_KEY) put as this account's."""
    from recon.config.accounts import group_settings

    if not text:
        return text
    entry = group_settings(overrides).accounts.get(name, {})
    for setting, key in (
        ("RECON_API_KEY", "api_key_env"),
        ("RECON_BEARER_TOKEN", "bearer_token_env"),
    ):
        if entry.get(key):
            text = text.replace(setting, f"{entry[key]}, [accounts.{name}] {key}")
    return text


def finish_group(
    overrides: Mapping[str, Any] | None, night_id: str, outcomes: Sequence[AccountOutcome]
) -> GroupSummary:
    """After every account: the consolidated warehouse, the group page, the one alert."""
    from recon.accounts.report import render_group_page
    from recon.config.accounts import account_names, group_settings
    from recon.config.overrides import settings_for
    from recon.warehouse.consolidated import build_consolidated

    top = group_settings(overrides)
    ordered = sorted(outcomes, key=lambda o: o.account)
    summary = GroupSummary(night_id, ordered, worst_exit_code([o.exit_code for o in ordered]))
    dbs: dict[str, Path] = {}
    for name in account_names(overrides):
        try:
            dbs[name] = settings_for(account_overrides(overrides, name)).db
        except ReconError:  # its settings broke after it ran: leave it out
            continue
    try:
        summary.consolidated = build_consolidated(top.db, dbs)
    except ReconError as exc:
        log.warning("consolidated warehouse not written: %s", exc)
    summary.page = render_group_page(top.reports, summary)
    notify_group(overrides, summary)
    return summary


def notify_group(overrides: Mapping[str, Any] | None, summary: GroupSummary) -> None:
    """One alert for the night, every account named (best effort, never raises)."""
    from recon.config.accounts import group_settings
    from recon.night.notify import send, wanted

    try:
        top = group_settings(overrides)
        if top.notify_url is None or not wanted(top.notify_on, exit_code=summary.exit_code):
            return
        send(top.notify_url, group_alert(summary), budget_s=top.notify_budget_s)
    except Exception as exc:  # an alert never fails the night
        log.warning("alert for night %s not sent: %s", summary.night_id, type(exc).__name__)


@dataclass(frozen=True)
class GroupAlert(Alert):
    """The night's alert: its text is the lines given."""

    body: tuple[str, ...] = ()

    def text(self) -> str:
        from recon.errors import scrub

        return scrub("\n".join(self.body))  # as every alert: no secret, whatever a reason says


def group_alert(summary: GroupSummary) -> GroupAlert:
    """The night's alert: a headline over all accounts, then one line per account."""
    counts = ", ".join(f"{o.account} {o.status}" for o in summary.outcomes)
    body = [
        f"recon night {summary.night_id}: {summary.status} (exit {summary.exit_code}): "
        f"{len(summary.outcomes)} account(s): {counts}"
    ]
    for o in summary.outcomes:
        line = f"  {o.account}: {o.status} (exit {o.exit_code})"
        if o.run_id:
            line += f", run {o.run_id}"
        if o.reason:
            line += f": {o.reason}"
        body.append(line)
        # the calls that failed for good, with the request ids to quote (at most 5 each)
        body.extend(f"    {x.strip()}" for x in o.lines if x.strip().startswith("FAILED"))
        if o.report_dir is not None:
            body.append(f"    report: {(o.report_dir / 'report.html').resolve()}")
    if summary.page is not None:
        body.append(f"group page: {summary.page.resolve()}")
    return GroupAlert(summary.night_id, summary.status, summary.exit_code, body=tuple(body))


def run_account_where(
    overrides: Mapping[str, Any] | None, name: str, *, apart: bool, **options: Any
) -> AccountOutcome:
    """Account `name`'s night in a process of its own (`apart`: the accounts' Python work
    on every core, `recon.accounts.processes`) or on this thread."""
    if apart:
        from recon.accounts.processes import run_account_apart

        return run_account_apart(run_account, overrides, name, **options)
    return run_account(overrides, name, **options)


def run_group_local(
    overrides: Mapping[str, Any] | None,
    *,
    resume: bool = False,
    retry_failed: bool = False,
    trigger: str = "local",
    fail_on: str | None = None,
    payment_methods: bool = False,
    max_workers: int | None = None,
    processes: bool | None = None,
) -> GroupSummary:
    """Every account's night side by side, then `finish_group`.

    Each account in a process of its own when `processes` (by default: more than one
    account and more than one core, `recon.accounts.processes`), else on threads here.
    """
    from recon.accounts.processes import AccountProcesses, worth_processes
    from recon.config.accounts import account_names
    from recon.runid import new_run_id

    apart = worth_processes(len(account_names(overrides))) if processes is None else processes
    children = AccountProcesses(run_account) if apart else None  # its fork server starts meanwhile
    names = group_preflight(overrides)
    night_id = new_run_id()
    options: dict[str, Any] = {
        "resume": resume,
        "retry_failed": retry_failed,
        "trigger": trigger,
        "fail_on": fail_on,
        "payment_methods": payment_methods,
    }
    if children is not None:
        runner = children

        def one(name: str) -> AccountOutcome:
            return runner.run(name, overrides=overrides, **options)
    else:

        def one(name: str) -> AccountOutcome:
            return run_account(overrides, name, **options)

    with ThreadPoolExecutor(
        max_workers=max_workers or max(1, len(names)), thread_name_prefix="recon-account"
    ) as pool:
        outcomes = list(pool.map(one, names))
    return finish_group(overrides, night_id, outcomes)
