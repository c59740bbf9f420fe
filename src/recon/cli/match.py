"""`recon match`: a person's match of a books order with payments, audited, through the
workbench's service (recon.workbench.service): with users (`recon users`), the CLI user's
role is checked and a match is a proposal an approver decides (four eyes); without, it
applies at once as it always did."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from recon.cli.common import AccountName, DbPath, app, as_overrides, guard, tell
from recon.errors import ConfigError

if TYPE_CHECKING:
    from recon.workbench.matching import MatchDone


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
        from recon.ledger.manual import Tolerance
        from recon.warehouse.consolidated import is_consolidated_file
        from recon.workbench.rules import may
        from recon.workbench.service import for_cli

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
        # the workbench's service: the roles and the four eyes (recon.workbench.rules)
        bench, actor = for_cli(warehouse)
        may(actor, "unmatch" if args[0] == "undo" else "match")
        log = bench.trail.path
        settings = load_settings(**as_overrides(db=warehouse))
        tolerance = Tolerance(settings.ledger_tolerance_minor, settings.ledger_tolerance_bps)
        if args[0] == "undo":
            if len(args) < 2:
                raise ConfigError("ORDER", "name the order(s) whose match to undo")
            n = bench.undo_matches(actor, args[1:], note)
            tell(f"undid {n} match(es); audit trail: {log}")
            return 0
        if args[0] == "accept":
            if note is None or not note.strip():
                raise ConfigError("--note", "must say why the proposals are right (audited)")
            done, skipped = bench.accept_suggestions(
                actor, note, keys=args[1:], currency=currency, tolerance=tolerance,
                confirm=lambda n: confirm_accept(n, yes),
            )  # fmt: skip
            for outcome in done:
                _said(outcome)
            for why in skipped:
                tell(f"not matched: {why}")
            if actor.four_eyes:
                tell(f"proposed {len(done)} match(es) for an approver; audit trail: {log}")
            else:
                tell(f"accepted {len(done)} proposal(s); audit trail: {log}")
            return 1 if skipped and args[1:] else 0
        if len(args) == 1:
            outcome = bench.accept_suggestion(
                actor, args[0], note, tolerance=tolerance, force=force
            )
        else:
            outcome = bench.match(actor, args[0], args[1:], note, tolerance=tolerance, force=force)
        _said(outcome)
        tell(f"audit trail: {log}")
        return 0

    raise typer.Exit(guard(go))


def _said(done: MatchDone) -> None:
    """One match, in words: what was matched (or proposed), what it resolved, what to look
    at."""
    line = done.fields or {}
    forced = " (forced: " + "; ".join(line["forced"]) + ")" if line.get("forced") else ""
    payments = ", ".join(line.get("payments") or ())
    if done.proposal is not None:
        tell(
            f"proposed matching {line['order']} with {payments}{forced}: proposal "
            f"{done.proposal} waits for an approver (recon proposals approve {done.proposal})"
        )
    else:
        tell(f"matched {line['order']} with {payments}{forced}")
    resolved = done.outcome.resolved if done.outcome else ()
    if resolved:
        tell(f"  resolved {len(resolved)} finding(s) by hand: {', '.join(resolved)}")
    for warning in done.warnings:
        tell(f"  warning: {warning}")


def confirm_accept(n: int, yes: bool) -> None:
    """Ask before accepting more than 100 proposals, unless --yes."""
    if n > 100 and not yes:
        typer.confirm(f"accept {n:,} proposals?", abort=True)
