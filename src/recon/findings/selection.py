"""What the `recon findings` commands share: the warehouse (and account) they act on, the
filters of `findings list` declared once (`Selection`, added to a command by
`with_selection`), the select-then-confirm of an action, and one line per error.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer

from recon.errors import ConfigError, ReconError, UsageError, duckdb_refusal, scrub

if TYPE_CHECKING:
    from recon.findings.listing import Filters, Finding

__all__ = [
    "CONFIRM_ABOVE",
    "AccountName",
    "DbPath",
    "Keys",
    "Selection",
    "Yes",
    "confirm",
    "guard",
    "require_note",
    "select_findings",
    "warehouse_paths",
    "with_selection",
]

CONFIRM_ABOVE = 100

DbPath = Annotated[
    Path | None, typer.Option("--db", help="Warehouse file (RECON_DB).", dir_okay=False)
]
Check = Annotated[str | None, typer.Option(help="Only this check's findings.")]
Currency = Annotated[str | None, typer.Option(help="Only findings in this currency.")]
State = Annotated[
    str | None,
    typer.Option(
        help="open (new and reopened included), new, reopened, investigating, acknowledged "
        "or resolved_manually."
    ),
]
OlderThan = Annotated[
    str | None,
    typer.Option(
        help="Known longer than this: recon first saw the break longer ago (7d, 12h, 2w); "
        "the age a finding's `known_days` counts."
    ),
]
ItemOlderThan = Annotated[
    str | None,
    typer.Option(
        help="The item itself is older than this: the order's, payment's, refund's or "
        "invoice's own date (7d, 12h, 2w); the age `item_age_days` counts. Items with no "
        "date of their own are left out."
    ),
]
Owner = Annotated[str | None, typer.Option(help="Only findings assigned to this owner.")]
Keys = Annotated[
    list[str] | None,
    typer.Argument(help="Finding keys (check:entity_id:issue); or select with the filters."),
]
Yes = Annotated[bool, typer.Option("--yes", help="Change more than 100 without asking.")]


def guard(fn: Callable[[], int]) -> int:
    try:
        return fn()
    except UsageError as exc:
        typer.echo(f"recon: {exc}", err=True)
        return 2
    except ConfigError as exc:
        typer.echo(f"recon: bad setting {exc}", err=True)
        return 2
    except ReconError as exc:
        typer.echo(f"recon: {exc}", err=True)
        return 1
    except BrokenPipeError:  # `recon findings list | head -1`: the reader has what it wants
        _quiet_stdout()
        return 0
    except OSError as exc:
        typer.echo(f"recon: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), err=True)
        return 1
    except Exception as exc:  # what the warehouse refuses: one line, never a traceback
        if (refused := duckdb_refusal(exc)) is None:
            raise
        typer.echo(f"recon: aborted: the warehouse refused: {scrub(refused)}", err=True)
        return 1


def _quiet_stdout() -> None:
    """Point standard output at /dev/null: what is still buffered for a reader that closed
    the pipe is dropped at exit instead of raising again (Python's documented remedy)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test runner's): nothing to quiet
        pass
    finally:
        os.close(devnull)


AccountName = Annotated[
    str | None,
    typer.Option("--account", help="The account whose findings (with [accounts] in recon.toml)."),
]


def warehouse_paths(db: Path | None, account: str | None = None) -> tuple[Path, Path]:
    from recon.config.accounts import account_db, account_names
    from recon.config.settings import load_settings
    from recon.findings.acks import acks_path
    from recon.warehouse.consolidated import is_consolidated_file

    if account is not None:
        found = account_db(account)
        return found, acks_path(found)
    if db is None and (names := account_names()):
        raise ConfigError(
            "--account", f"recon.toml has several accounts: name one ({', '.join(names)})"
        )
    settings = load_settings(**({"db": str(db)} if db else {}))
    if (names := account_names()) and is_consolidated_file(settings.db):
        raise ConfigError(
            "--db",
            f"{settings.db} is the consolidated warehouse of every account: name one with "
            f"--account ({', '.join(names)})",
        )
    return settings.db, acks_path(settings.db)


@dataclass(frozen=True)
class Selection:
    """The options every findings command shares: which warehouse (and account) and which
    findings (the filters of `findings list`)."""

    check: Check = None
    currency: Currency = None
    state: State = None
    older_than: OlderThan = None
    item_older_than: ItemOlderThan = None
    owner: Owner = None
    db: DbPath = None
    account: AccountName = None

    def paths(self) -> tuple[Path, Path]:
        """The warehouse and its audit trail."""
        return warehouse_paths(self.db, self.account)

    def filters(self) -> Filters:
        from recon.findings.listing import Filters, parse_age

        older = self.older_than
        item_older = self.item_older_than
        return Filters(
            check=self.check,
            currency=self.currency,
            older_than=parse_age(older) if older else None,
            state=self.state,
            owner=self.owner,
            item_older_than=parse_age(item_older, "--item-older-than") if item_older else None,
        )

    def chosen(
        self, verb: str, keys: Sequence[str] | None, yes: bool
    ) -> tuple[Path, Iterable[Finding]]:
        """The audit trail and the findings an action changes (said, and asked for above
        CONFIRM_ABOVE unless --yes). Chosen by filters alone, they are counted in one
        streamed pass and handed over as a second stream: a bulk action on a million
        findings never holds them (issue 38)."""
        from recon.findings.listing import iter_findings

        warehouse, log = self.paths()
        filters = self.filters()
        if keys:
            found = select_findings(warehouse, log, keys, filters)
            confirm(verb, len(found), filters, yes)
            return log, found
        if not filters.any:
            raise ConfigError("FINDING_KEY", "name findings by key or select them with a filter")
        count = sum(1 for _ in iter_findings(warehouse, log, filters=filters, order="none"))
        confirm(verb, count, filters, yes)
        return log, iter_findings(warehouse, log, filters=filters, order="none")


def with_selection(command: Callable[..., None]) -> Callable[..., None]:
    """A command taking `sel: Selection` gets the options of `Selection` on its command line
    (declared once here, not in every command) and is called with them gathered."""
    from typing import get_type_hints

    own = inspect.signature(command, eval_str=True)
    shared = get_type_hints(Selection, include_extras=True)
    names = [f.name for f in fields(Selection)]
    params = [p for p in own.parameters.values() if p.name != "sel"] + [
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=shared[n])
        for n in names
    ]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> None:
        sel = Selection(**{n: kwargs.pop(n) for n in names})
        command(sel=sel, **kwargs)

    wrapper.__signature__ = own.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__  # typer reads the signature above, not the command's
    return wrapper


def select_findings(db: Path, log: Path, keys: Sequence[str], filters: Filters) -> list[Finding]:
    """The findings an action changes: the keys named (all must be unresolved findings of
    the latest run), narrowed by the filters; or every finding the filters keep."""
    from recon.findings.listing import list_findings

    if not keys and not filters.any:
        raise ConfigError("FINDING_KEY", "name findings by key or select them with a filter")
    if not keys:
        return list_findings(db, log, filters=filters)
    found = {f.finding_key: f for f in list_findings(db, log, keys=keys)}
    unknown = [k for k in keys if k not in found]
    if unknown:
        raise UsageError(
            "FINDING_KEY",
            f"unknown finding key {', '.join(unknown)}: not an unresolved finding of the "
            "latest run (`recon findings list` shows their keys)",
        )
    now = datetime.now(UTC)
    return [found[k] for k in dict.fromkeys(keys) if filters.keeps(found[k], now)]


def confirm(verb: str, count: int, filters: Filters, yes: bool) -> None:
    """Say how many will change; ask above CONFIRM_ABOVE unless --yes."""
    typer.echo(f"{verb} {count:,} finding(s) ({filters.describe()})", err=True)
    if count <= CONFIRM_ABOVE or yes:
        return
    try:
        agreed = typer.confirm(f"Change {count:,} findings?", default=False, err=True)
    except (click.exceptions.Abort, typer.Abort):  # no answer (stdin closed or not a terminal)
        typer.echo("", err=True)
        raise ConfigError("--yes", f"{count:,} findings would change: confirm with --yes") from None
    if not agreed:
        raise ReconError("nothing changed")


def require_note(note: str | None, why: str) -> str:
    if note is None or not note.strip():
        raise ConfigError("--note", f"must say why the findings are {why}")
    return note.strip()
