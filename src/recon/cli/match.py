"""`recon match`: a person's match of a books order with payments, audited."""

from __future__ import annotations

from typing import Annotated

import typer

from recon.cli.common import AccountName, DbPath, app, as_overrides, guard, tell
from recon.errors import ConfigError


@app.command()
def match(
    args: Annotated[
        list[str],
        typer.Argument(
            help="ORDER PAYMENT… (the order's reference or order_id, then payment ids), a "
            "ledger_suggested_match finding key, or `undo ORDER…`."
        ),
    ],
    note: Annotated[
        str | None, typer.Option("--note", help="Why they belong together (audited).")
    ] = None,
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Match a books order with payments by hand (kept in the audit trail with who, when and
    the note; honoured every night as rule `manual` while both sides keep their amounts).

    recon match ORD-1 pay_123 --note "…"; recon match ledger_suggested_match:SO-9:suggested
    --note "…"; recon match undo ORD-1 --note "…". With [accounts] in recon.toml, --account
    names whose books and trail.
    """

    def go() -> int:
        from recon.findings.acks import acks_path
        from recon.group.accounts import account_db, account_names
        from recon.group.consolidated import is_consolidated_file
        from recon.ledger.manual import match_order, match_suggestion, undo_matches
        from recon.settings import load_settings

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
        if args[0] == "undo":
            if len(args) < 2:
                raise ConfigError("ORDER", "name the order(s) whose match to undo")
            n = undo_matches(log, args[1:], note)
            tell(f"undid {n} match(es); audit trail: {log}")
            return 0
        if len(args) == 1:
            line = match_suggestion(warehouse, log, args[0], note)
        else:
            line = match_order(warehouse, log, args[0], args[1:], note)
        tell(
            f"matched {line['order']} with {', '.join(line['payments'])} (from the next run); "
            f"audit trail: {log}"
        )
        return 0

    raise typer.Exit(guard(go))
