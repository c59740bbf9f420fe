"""The commands that run one step of the night: `extract`, `load`, `check`, `report` (the
whole night: recon.cli.run)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

from recon.cli.common import (
    AccountName,
    BaseUrl,
    DbPath,
    LandingDir,
    ReportsDir,
    RunId,
    app,
    as_overrides,
    configure_logging,
    guard,
    out,
    progress_display,
)
from recon.cli.run import configured_accounts, locked, print_summary
from recon.errors import ConfigError

__all__ = ["check", "extract", "load", "one_account", "report"]


def one_account(
    overrides: dict[str, Any],
    account: str | None,
    *,
    offline: Literal["books", "warehouse"] | None = None,
) -> dict[str, Any]:
    """A single step's overrides: as `--account` names (the paths given are then roots), or
    as today without [accounts]; several configured and none named is refused.

    `offline`: the step sends no request, so the account's key variables need not be set
    ("books": it reads the books, whose database URL it may need; "warehouse": it reads
    nothing else, so no secret of the account at all).
    """
    if account is not None:
        chosen = {**overrides, "account": account}
        if offline is not None:
            chosen["offline"] = offline
        return chosen
    if names := configured_accounts(overrides):
        raise ConfigError(
            "--account", f"recon.toml has several accounts: name one ({', '.join(names)})"
        )
    return overrides


@app.command()
def extract(
    base_url: BaseUrl = None,
    landing: LandingDir = None,
    resume: Annotated[
        str | None, typer.Option("--resume", help="Go on with a landed run (RUN_ID or latest).")
    ] = None,
    payment_methods: Annotated[
        bool, typer.Option("--payment-methods", help="Also list customers' payment methods.")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging.")] = False,
    account: AccountName = None,
) -> None:
    """Extract and land every resource (no load); prints the run id to load."""
    from recon.night import nightly as steps

    configure_logging(verbose)
    overrides = as_overrides(base_url=base_url, landing=landing)

    def run() -> int:
        overrides.update(one_account(overrides, account))
        with locked(overrides):
            return extract_run()

    def extract_run() -> int:
        run_id = steps.start_step(overrides, resume=resume)
        with progress_display(enabled=True):
            outcomes = steps.extract_step(overrides, run_id, payment_methods=payment_methods)
        for o in outcomes:
            out.print(f"  {o.resource:<16} {o.status:<11} {o.records:>9,} records", highlight=False)
        out.print(f"run {run_id} landed; load it with: recon load --run {run_id}")
        if any(o.fatal for o in outcomes):
            return 1
        return 0 if all(o.status in ("complete", "skipped") for o in outcomes) else 3

    raise typer.Exit(guard(run))


@app.command()
def load(
    run: Annotated[str, typer.Option("--run", help="The landed run to load.")],
    db: DbPath = None,
    landing: LandingDir = None,
    account: AccountName = None,
) -> None:
    """Load a landed run into the warehouse (one transaction) and publish it."""
    from recon.night import nightly as steps

    def go() -> int:
        overrides = one_account(as_overrides(db=db, landing=landing), account, offline="books")
        with locked(overrides):
            result = steps.load_step(overrides, run, publish=True)
        out.print(f"run {run}: {result.status}", highlight=False)
        return 0

    raise typer.Exit(guard(go))


@app.command()
def check(run: RunId = None, db: DbPath = None, account: AccountName = None) -> None:
    """Run every sql/checks file for a run and publish the findings."""
    from recon.night import nightly as steps

    def go() -> int:
        overrides = one_account(as_overrides(db=db), account, offline="warehouse")
        with locked(overrides):
            results = steps.check_step(overrides, run, publish=True, fresh=True)
        for r in results:
            out.print(f"  {r.check_name:<36} {r.status:<14} {r.finding_count:>7}", highlight=False)
        return 0

    raise typer.Exit(guard(go))


@app.command()
def report(
    run: RunId = None,
    db: DbPath = None,
    reports: ReportsDir = None,
    fail_on: Annotated[
        Literal["error", "warn", "info"] | None,
        typer.Option(help="Exit 4 when a check of this severity or worse found something."),
    ] = None,
    account: AccountName = None,
) -> None:
    """Write reports/<run_id>/ from the published warehouse."""
    from recon.night import nightly as steps

    def go() -> int:
        overrides = one_account(as_overrides(db=db, reports=reports), account, offline="warehouse")
        summary = steps.report_step(overrides, run, fail_on=fail_on)
        print_summary(summary)
        return int(summary.exit_code)

    raise typer.Exit(guard(go))
