"""`recon match`: a person's match of a books order with payments, audited."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from recon.cli.common import AccountName, DbPath, app, as_overrides, guard, tell
from recon.errors import ConfigError

if TYPE_CHECKING:
    from recon.ledger.manual import MatchOutcome


@app.command()
def match(
    args: Annotated[
        list[str],
        typer.Argument(
            help="ORDER PAYMENT… (the order's reference or order_id, then payment ids), a "
            "ledger_suggested_match finding key, `accept [KEY…]` or `undo ORDER…`."
        ),
    ],
    note: Annotated[
        str | None, typer.Option("--note", help="Why they belong together (audited).")
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Match although the currencies differ or the amounts differ beyond the "
            "tolerance (the line says so; the --note says why).",
        ),
    ] = False,
    currency: Annotated[
        str | None, typer.Option("--currency", help="accept: only proposals in this currency.")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="accept: take more than 100 proposals without asking.")
    ] = False,
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Match a books order with payments by hand: checked (same currency, amounts within
    RECON_LEDGER_TOLERANCE_* unless --force), applied at once (links, ledger_matches, the
    findings of both sides resolved) and kept in the audit trail with who, when and the
    note; honoured every night as rule `manual` while both sides keep their amounts.

    recon match ORD-1 pay_123 --note "…"; recon match ledger_suggested_match:SO-9:suggested
    --note "…"; recon match accept [--currency EUR] --note "…" (every unambiguous proposal,
    or the finding keys named); recon match undo ORD-1 --note "…". With [accounts] in
    recon.toml, --account names whose books and trail.
    """

    def go() -> int:
        from recon.config.accounts import account_db, account_names
        from recon.config.settings import load_settings
        from recon.findings.acks import acks_path
        from recon.ledger.manual import (
            Tolerance,
            accept_suggestions,
            match_order,
            match_suggestion,
            undo_matches,
        )
        from recon.warehouse.consolidated import is_consolidated_file

        if account is not None:
            warehouse = account_db(account)
        elif db is None and (names := account_names()):  # never the consolidated file's
            raise ConfigError(
                "--account", f"recon.toml has several accounts: name one ({', '.join(names)})"
            )
        else:
            warehouse = load_settings(**as_overrides(db=db)).db
            if account_names() and is_consolidated_file(warehouse):
                raise ConfigError(
                    "--db",
                    f"{warehouse} is the consolidated warehouse of every account: name one with "
                    f"--account ({', '.join(account_names())})",
                )
        log = acks_path(warehouse)
        settings = load_settings(**as_overrides(db=warehouse))
        tolerance = Tolerance(settings.ledger_tolerance_minor, settings.ledger_tolerance_bps)
        if args[0] == "undo":
            if len(args) < 2:
                raise ConfigError("ORDER", "name the order(s) whose match to undo")
            n = undo_matches(log, args[1:], note)
            tell(f"undid {n} match(es); audit trail: {log}")
            return 0
        if args[0] == "accept":
            if note is None or not note.strip():
                raise ConfigError("--note", "must say why the proposals are right (audited)")
            done, skipped = accept_suggestions(
                warehouse, log, note, keys=args[1:], currency=currency, tolerance=tolerance,
                confirm=lambda n: confirm_accept(n, yes),
            )  # fmt: skip
            for outcome in done:
                _said(outcome)
            for why in skipped:
                tell(f"not matched: {why}")
            tell(f"accepted {len(done)} proposal(s); audit trail: {log}")
            return 1 if skipped and args[1:] else 0
        if len(args) == 1:
            outcome = match_suggestion(
                warehouse, log, args[0], note, tolerance=tolerance, force=force
            )
        else:
            outcome = match_order(
                warehouse, log, args[0], args[1:], note, tolerance=tolerance, force=force
            )
        _said(outcome)
        tell(f"audit trail: {log}")
        return 0

    raise typer.Exit(guard(go))


def _said(outcome: MatchOutcome) -> None:
    """One match, in words: what was matched, what it resolved, what to look at."""
    line = outcome.line
    forced = " (forced: " + "; ".join(line["forced"]) + ")" if line.get("forced") else ""
    tell(f"matched {line['order']} with {', '.join(line['payments'])}{forced}")
    resolved = outcome.resolved
    if resolved:
        tell(f"  resolved {len(resolved)} finding(s) by hand: {', '.join(resolved)}")
    for warning in outcome.warnings:
        tell(f"  warning: {warning}")


def confirm_accept(n: int, yes: bool) -> None:
    """Ask before accepting more than 100 proposals, unless --yes."""
    if n > 100 and not yes:
        typer.confirm(f"accept {n:,} proposals?", abort=True)
