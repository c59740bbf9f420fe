"""`recon findings list|ack|unack|assign|resolve|export|import|verify`: the exceptions a team
works off, every decision one line of a hash-chained audit trail.

Every action takes the keys it names and/or the filters of `findings list` (--check,
--currency, --older-than, --state, --owner), says how many findings it will change, and
asks before changing more than 100 unless --yes.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer

from recon.errors import ConfigError, ReconError, UsageError, duckdb_refusal, scrub

if TYPE_CHECKING:
    from recon.findings.listing import Filters, Finding
    from recon.fx import Rates

app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Work off findings as a team: list, acknowledge, assign, resolve (audited), "
    "round-trip through Excel, verify the audit trail.",
)

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


def _guard(fn: Callable[[], int]) -> int:
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
    except OSError as exc:
        typer.echo(f"recon: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), err=True)
        return 1
    except Exception as exc:  # what the warehouse refuses: one line, never a traceback
        if (refused := duckdb_refusal(exc)) is None:
            raise
        typer.echo(f"recon: aborted: the warehouse refused: {scrub(refused)}", err=True)
        return 1


AccountName = Annotated[
    str | None,
    typer.Option("--account", help="The account whose findings (with [accounts] in recon.toml)."),
]


def _paths(db: Path | None, account: str | None = None) -> tuple[Path, Path]:
    from recon.findings.acks import acks_path
    from recon.group.accounts import account_db, account_names
    from recon.group.consolidated import is_consolidated_file
    from recon.settings import load_settings

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


def _rates(db: Path | None) -> Rates | None:
    from recon.fx import load_rates
    from recon.settings import load_settings

    path = load_settings(**({"db": str(db)} if db else {})).fx_rates
    return load_rates(path) if path is not None else None


def _money(amount: int | None, currency: str | None) -> str:
    from recon.currency import format_minor, is_iso4217

    if amount is None:
        return "—"
    if currency is None or not is_iso4217(currency):
        return f"{currency or '?'} {amount:,} (minor units)"
    return format_minor(amount, currency)


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
        return _paths(self.db, self.account)

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
    ) -> tuple[Path, list[Finding]]:
        """The audit trail and the findings an action changes (said, and asked for above
        CONFIRM_ABOVE unless --yes)."""
        warehouse, log = self.paths()
        filters = self.filters()
        found = _select(warehouse, log, keys or [], filters)
        _confirm(verb, len(found), filters, yes)
        return log, found


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


def _select(db: Path, log: Path, keys: Sequence[str], filters: Filters) -> list[Finding]:
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


def _confirm(verb: str, count: int, filters: Filters, yes: bool) -> None:
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


def _note(note: str | None, why: str) -> str:
    if note is None or not note.strip():
        raise ConfigError("--note", f"must say why the findings are {why}")
    return note.strip()


@app.command("list")
@with_selection
def list_(
    sort: Annotated[
        str,
        typer.Option(
            help="severity (then oldest first), amount (per currency, largest first) or "
            "converted (largest first across currencies, with RECON_FX_RATES).",
        ),
    ] = "severity",
    *,
    sel: Selection,
) -> None:
    """List the latest run's unresolved findings with their work state and owner."""
    from recon.findings.listing import list_findings
    from recon.findings.order import sort_findings
    from recon.visible import visible

    def go() -> int:
        warehouse, log = sel.paths()
        rates = _rates(sel.db)
        found = list_findings(warehouse, log, filters=sel.filters())
        for f in sort_findings(found, sort, rates):
            seen = f.first_seen_at.date().isoformat() if f.first_seen_at else "?"
            item = f" item of {f.item_at.date().isoformat()}" if f.item_at else ""
            converted = rates.label(f.amount_minor, f.currency) if rates else None
            line = (
                f"{f.work_state:<12} {f.finding_key}  {_money(f.amount_minor, f.currency)}"
                f"{f' ({converted})' if converted else ''}  known since {seen}{item}"
                f"  {f.detail or ''}"
            )
            event = f.ack
            if f.owner:
                line += f"  [owner {f.owner}]"
            if event is not None and f.decided in ("acknowledged", "resolved_manually"):
                verb = "acknowledged" if f.decided == "acknowledged" else "resolved manually"
                until = f", until {event.until}" if event.until else ""
                reason = f" ({event.reason})" if event.reason else ""
                line += (
                    f"  [{verb} by {event.who} {event.at:%Y-%m-%d}{until}{reason}: {event.note}]"
                )
            if f.lapsed:
                line += f"  [lapsed: {f.lapsed}]"
            typer.echo(visible(line))  # a NUL, BEL or RLO from the API shown, not obeyed
        count = {s: sum(f.decided == s for f in found) for s in ("open", "investigating")}
        acked = sum(f.decided == "acknowledged" for f in found)
        manual = sum(f.decided == "resolved_manually" for f in found)
        new = sum(f.work_state == "new" for f in found)
        back = sum(f.work_state == "reopened" for f in found)
        typer.echo(
            f"{count['open']:,} open ({new:,} new{f', {back:,} reopened' if back else ''}), "
            f"{count['investigating']:,} investigating, "
            f"{acked:,} acknowledged, {manual:,} resolved manually",
            err=True,
        )
        return 0

    raise typer.Exit(_guard(go))


def _until(value: str | None) -> date | None:
    if value is None:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise ConfigError("--until", f"{value!r} is not a date (YYYY-MM-DD)") from None
    if day < datetime.now(UTC).date():
        raise ConfigError("--until", f"{value} has already passed")
    return day


@app.command()
@with_selection
def ack(
    keys: Keys = None,
    note: Annotated[
        str | None, typer.Option("--note", help="Why (kept in the audit trail).")
    ] = None,
    until: Annotated[str | None, typer.Option(help="Reopen after this day (YYYY-MM-DD).")] = None,
    yes: Yes = False,
    *,
    sel: Selection,
) -> None:
    """Acknowledge findings: they stay listed, counted apart, until their amounts change."""
    from recon.findings.acks import AckLog

    def go() -> int:
        text = _note(note, "acknowledged")
        day = _until(until)
        log, found = sel.chosen("acknowledging", keys, yes)
        AckLog(log).append("ack", [(f.finding_key, f.amounts) for f in found], note=text, until=day)
        typer.echo(f"acknowledged {len(found)} finding(s); audit trail: {log}")
        return 0

    raise typer.Exit(_guard(go))


@app.command()
@with_selection
def assign(
    keys: Keys = None,
    to: Annotated[str | None, typer.Option("--to", help="Who investigates them.")] = None,
    note: Annotated[str | None, typer.Option("--note", help="Why or what (optional).")] = None,
    yes: Yes = False,
    *,
    sel: Selection,
) -> None:
    """Mark findings as being investigated by an owner (audited)."""
    from recon.findings.acks import AckLog

    def go() -> int:
        if to is None or not to.strip():
            raise ConfigError("--to", "must name who investigates the findings")
        log, found = sel.chosen("assigning", keys, yes)
        AckLog(log).append(
            "assign",
            [(f.finding_key, f.amounts) for f in found],
            note=note.strip() if note else None,
            owner=to.strip(),
        )
        typer.echo(f"assigned {len(found)} finding(s) to {to.strip()}; audit trail: {log}")
        return 0

    raise typer.Exit(_guard(go))


@app.command()
@with_selection
def resolve(
    keys: Keys = None,
    reason: Annotated[
        str | None,
        typer.Option(help="timing, provider_error, books_error, written_off, duplicate or other."),
    ] = None,
    note: Annotated[
        str | None, typer.Option("--note", help="How (kept in the audit trail).")
    ] = None,
    yes: Yes = False,
    *,
    sel: Selection,
) -> None:
    """Resolve findings by hand with a reason code and a note (audited); they reopen if
    their amounts change."""
    from recon.findings.acks import AckLog
    from recon.findings.work import REASONS

    def go() -> int:
        if reason not in REASONS:
            raise ConfigError("--reason", f"must be one of {', '.join(REASONS)}")
        text = _note(note, "resolved")
        log, found = sel.chosen("resolving", keys, yes)
        AckLog(log).append(
            "resolve", [(f.finding_key, f.amounts) for f in found], note=text, reason=reason
        )
        typer.echo(f"resolved {len(found)} finding(s) manually ({reason}); audit trail: {log}")
        return 0

    raise typer.Exit(_guard(go))


@app.command()
@with_selection
def unack(
    keys: Keys = None,
    note: Annotated[str | None, typer.Option("--note", help="Why (optional).")] = None,
    yes: Yes = False,
    *,
    sel: Selection,
) -> None:
    """Withdraw acknowledgements, assignments or manual resolutions: open again (audited)."""
    from recon.findings.acks import AckLog
    from recon.findings.work import work_events

    def go() -> int:
        warehouse, log = sel.paths()
        filters = sel.filters()
        works = work_events(AckLog(log).read())

        def worked(key: str) -> bool:
            w = works.get(key)
            return w is not None and w.event is not None and w.event.action != "unack"

        if keys and not filters.any:
            unknown = [k for k in keys if not worked(k)]
            if unknown:
                raise UsageError(
                    "FINDING_KEY",
                    f"{', '.join(unknown)}: not acknowledged, assigned or resolved",
                )
            chosen = list(dict.fromkeys(keys))
        else:
            chosen = [
                f.finding_key
                for f in _select(warehouse, log, keys or [], filters)
                if worked(f.finding_key)
            ]
        _confirm("reopening", len(chosen), filters, yes)
        AckLog(log).append("unack", [(k, None) for k in chosen], note=note)
        typer.echo(f"reopened {len(chosen)} finding(s); audit trail: {log}")
        return 0

    raise typer.Exit(_guard(go))


@app.command()
def verify(db: DbPath = None, account: AccountName = None) -> None:
    """Check the audit trail's hash chain: exit 0 if intact, 1 naming the first line that
    was edited, removed or reordered."""
    from recon.findings.verify import verify_trail

    def go() -> int:
        warehouse, log = _paths(db, account)
        report = verify_trail(log, _recorded(warehouse))
        for note in report.notes:
            typer.echo(f"note: {note}", err=True)
        if not report.intact:
            typer.echo(f"recon: audit trail {log}: {report.problem}", err=True)
            return 1
        typer.echo(f"audit trail intact: {report.lines:,} line(s) in {log}")
        return 0

    raise typer.Exit(_guard(go))


def _recorded(warehouse: Path) -> dict[int, str]:
    """The (line, hash) pairs the published warehouse copied at its last load."""
    import duckdb

    from recon.database import open_readonly

    if not warehouse.exists():
        return {}
    try:
        con = open_readonly(warehouse)
    except (ReconError, duckdb.Error):
        return {}
    try:
        rows = con.execute(
            "SELECT seq, line_hash FROM finding_acks WHERE line_hash IS NOT NULL"
        ).fetchall()
    except duckdb.Error:
        return {}
    finally:
        con.close()
    return {int(seq): str(digest) for seq, digest in rows}


# The worklist commands live beside these; importing them registers them on `app`.
from recon.findings import cli_worklist  # noqa: E402, F401
