"""`recon close YYYY-MM`: the period's close pack, its sign-off, and reopening it. Signing off
and reopening are an approver's acts, taken through the workbench's service
(recon.workbench.service): with users (`recon users`), the CLI user must be an approver or
an admin; without, the single operator signs as before."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from recon.cli.common import AccountName, DbPath, ReportsDir, app, fail, guard, tell

__all__ = ["close"]


@app.command()
def close(
    period: Annotated[str, typer.Argument(help="The month to close, UTC: 2026-10.")],
    sign_off: Annotated[
        str | None, typer.Option("--sign-off", help="Who signs the period off (freezes it).")
    ] = None,
    note: Annotated[
        str | None, typer.Option("--note", help="The sign-off's or reopening's note.")
    ] = None,
    provisional: Annotated[
        bool,
        typer.Option(
            "--provisional", help="Sign off a month that has not ended yet (marked provisional)."
        ),
    ] = False,
    reopen: Annotated[
        bool, typer.Option("--reopen", help="Reopen a signed-off period to redo it (needs --note).")
    ] = False,
    accept_incomplete: Annotated[
        bool,
        typer.Option("--accept-incomplete", help="Close although a night of it is incomplete."),
    ] = False,
    db: DbPath = None,
    reports: ReportsDir = None,
    account: AccountName = None,
) -> None:
    """Write reports/close-YYYY-MM/ (close.xlsx, close.html): roll-forward, open and resolved
    findings, provider and books activity; --sign-off freezes it (audited)."""
    from recon.close import ClosedError, close_period, parse_period
    from recon.config.settings import load_settings
    from recon.errors import ConfigError
    from recon.findings.acks import acks_path

    def go() -> Path:
        month = parse_period(period)
        if sign_off is not None and not (sign_off.strip() and note and note.strip()):
            raise ConfigError("--sign-off", "needs a name and a --note")
        if provisional and sign_off is None:
            raise ConfigError("--provisional", "is for --sign-off")
        if reopen and not (note and note.strip()):
            raise ConfigError("--reopen", "needs a --note saying why")
        overrides = {k: str(v) for k, v in (("db", db), ("reports", reports)) if v}
        if account is not None or (names := _several(overrides)):  # [accounts]: one's month
            from recon.config.accounts import account_settings

            if account is None:
                raise ConfigError(
                    "--account", f"recon.toml has several accounts: name one ({', '.join(names)})"
                )
            settings = account_settings(account, overrides, secrets=False)
        else:
            settings = load_settings(**overrides)
        failed = tuple(settings.refund_failed_statuses)
        try:
            if sign_off is not None or reopen:
                # an approver's act: through the workbench's service (the roles; `who`)
                from recon.workbench.service import for_cli

                bench, actor = for_cli(settings.db)
                if sign_off is not None:
                    paths = bench.sign_off(
                        actor, month, note, settings.reports, signer=sign_off.strip(),
                        provisional=provisional, accept_incomplete=accept_incomplete,
                        failed_statuses=failed, account=account,
                        reopen_note=(note or "").strip() if reopen else None,
                    )  # fmt: skip
                else:
                    paths = bench.reopen(
                        actor, month, (note or "").strip(), settings.reports,
                        accept_incomplete=accept_incomplete, failed_statuses=failed,
                        account=account,
                    )  # fmt: skip
            else:
                paths = close_period(
                    settings.db,
                    acks_path(settings.db),
                    settings.reports,
                    month,
                    accept_incomplete=accept_incomplete,
                    failed_statuses=failed,
                    account=account,
                )
        except ClosedError as exc:
            raise fail(1, str(exc)) from None
        fig = paths.figures
        for row in fig.rollforward.to_pylist():
            tell(
                f"{row['family']:<12} {row['currency'] or '-':<4} open {row['open_start_count']:,} "
                f"+ new {row['new_count']:,} - resolved {row['resolved_count']:,} = "
                f"{row['open_end_count']:,}  {'ties' if row['ties'] else 'DOES NOT TIE'}"
            )
        if fig.incomplete:
            tell(f"closed with {len(fig.incomplete)} incomplete night(s) (accepted, on the cover)")
        for a in fig.after_sign_off:
            tell(a.line())
        if fig.superseded:
            tell(f"{len(fig.superseded)} failed night(s) covered by a later complete one (listed)")
        state = "draft (not signed off)"
        if paths.signed:
            state = f"signed off by {sign_off}" + (" PROVISIONALLY" if provisional else "")
        whose = f"account {account}: " if account else ""
        tell(f"{whose}close pack {month.name}: {state}: {paths.xlsx}, {paths.html}")
        return paths.folder

    guard(go)


def _several(overrides: dict[str, str]) -> list[str]:
    from recon.config.accounts import account_names

    return account_names(overrides)
