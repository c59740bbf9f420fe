"""`recon nightly` when recon.toml has `[accounts]`: every account side by side (recon.accounts)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recon.cli.common import out
from recon.errors import ConfigError

__all__ = ["accepted_books", "run_group_night"]


def accepted_books(
    names: list[str], inputs: list[str], accounts: list[str]
) -> dict[str, list[str]]:
    """`--accept-books INPUT --account NAME…`: the books inputs to accept, per account.

    Books are per account, so is accepting them: the accounts are named (every one of them,
    if all are meant), never implied — a deliberately emptied file of one account must not
    let another's empty file through.
    """
    if accounts and not inputs:
        raise ConfigError(
            "--account",
            "`recon nightly` runs every account; --account names whose books --accept-books "
            "accepts",
        )
    if inputs and not accounts:
        raise ConfigError(
            "--accept-books",
            f"name the account whose books to accept: --account NAME ({', '.join(names)})",
        )
    for name in accounts:
        if name not in names:
            raise ConfigError(
                "--account", f"no account {name!r} in [accounts] (known: {', '.join(names)})"
            )
    return {name: list(inputs) for name in dict.fromkeys(accounts)}


def run_group_night(
    overrides: dict[str, Any],
    *,
    accepting: dict[str, list[str]],
    note: str | None,
    sandbox: bool,
    resume: str | None,
    retry_failed: str | None,
    fail_on: str | None,
    payment_methods: bool,
    task_runner: str,
    dask_address: str | None,
    announce: Callable[[str], None],
) -> int:
    """Check every account before any request, run them all, print the night; exit code."""
    from recon.accounts.night import group_preflight
    from recon.orchestrator import NightlyOptions, load_orchestrator
    from recon.runid import new_run_id

    if sandbox:
        raise ConfigError(
            "--sandbox", "not with [accounts]: serve them with `recon sandbox serve --account …`"
        )
    if retry_failed not in (None, "latest"):
        raise ConfigError(
            "--retry-failed",
            "with [accounts] every account finishes its newest incomplete run: give no RUN_ID",
        )
    if resume and retry_failed:
        raise ConfigError("--retry-failed", "cannot be combined with --resume")
    if resume not in (None, "latest"):
        raise ConfigError(
            "--resume", "with [accounts] every account resumes its newest run: give no RUN_ID"
        )
    names = group_preflight(overrides)  # every account, before Prefect and any request
    if accepting:
        _accept(overrides, accepting, note)
    if task_runner == "dask":
        config = Path(os.environ.get("RECON_CONFIG", "recon.toml"))
        if config.is_file():  # workers are other processes: they read the same file
            os.environ["RECON_CONFIG"] = str(config.resolve())
    else:  # the accounts' fork server: its imports beside Prefect's start-up
        from recon.accounts.processes import start_fork_server

        start_fork_server(len(names))
    options = NightlyOptions(
        trigger="cli",
        resume="latest" if resume else None,
        fail_on=fail_on,
        payment_methods=payment_methods,
        task_runner="dask" if task_runner == "dask" else "threads",
        dask_address=dask_address,
        retry_failed="latest" if retry_failed else None,
    )
    from recon.cli.common import progress_display

    orchestrator = load_orchestrator()
    with orchestrator.session(announce), progress_display(enabled=True):
        summary = orchestrator.run_group(overrides, names, new_run_id(), options)
    print_group(summary)
    return int(summary.exit_code)


def _accept(overrides: dict[str, Any], accepting: dict[str, list[str]], note: str | None) -> None:
    """Each named account's `accept_books` line in its own audit trail (after the checks of
    every account, before any request; every account's inputs checked before any line is
    written), said on stderr like the single account's."""
    from recon.accounts.night import account_overrides
    from recon.cli.common import say
    from recon.ledger.loading import accept_books, check_accept
    from recon.night.nightly import settings_for

    settings = {name: settings_for(account_overrides(overrides, name)) for name in accepting}
    for name, inputs in accepting.items():
        check_accept(settings[name], inputs, note, account=name)
    for name, inputs in accepting.items():
        trail = accept_books(settings[name], inputs, note, account=name)
        say(
            f"account {name}: accepted books {', '.join(inputs)} for this night (audit: {trail[0]})"
        )


def print_group(summary: Any) -> None:
    """The night's closing lines: one block per account, then the group page and warehouse."""
    from recon.cli.common import recon_command

    colour = {"complete": "green", "incomplete": "yellow"}.get(summary.status, "red")
    out.print(
        f"\nnight {summary.night_id}: [bold {colour}]{summary.status}[/] "
        f"({len(summary.outcomes)} accounts, exit {summary.exit_code})",
        highlight=False,
    )
    for o in summary.outcomes:
        run = f" run {o.run_id}" if o.run_id else ""
        out.print(
            f"\naccount {o.account}: {o.status} (exit {o.exit_code}){run}",
            highlight=False,
            markup=False,
        )
        if o.reason:
            out.print(f"  {o.reason}", markup=False, highlight=False)
        for line in o.lines:
            out.print(line, markup=False, highlight=False)
        if o.report_dir:
            report = Path(o.report_dir).resolve() / "report.html"
            out.print(f"  report: {report}", markup=False, highlight=False)
    if summary.page:
        out.print(f"\ngroup page: {Path(summary.page).resolve()}", markup=False, highlight=False)
    if summary.consolidated:
        db = Path(summary.consolidated).resolve()
        out.print(f"warehouse:  {db} (every account)", markup=False, highlight=False)
        sql = '"SELECT account, status, count(*) AS runs FROM runs GROUP BY ALL ORDER BY ALL"'
        out.print(
            f"query it:   {recon_command()} query {sql} --db {shlex.quote(str(db))}",
            markup=False,
            highlight=False,
        )
