"""`recon findings list|ack|unack|assign|resolve|export|import|verify`: the exceptions a team
works off, every decision one line of a hash-chained audit trail.

Every action takes the keys it names and/or the filters of `findings list` (--check,
--currency, --older-than, --state, --owner), says how many findings it will change, and
asks before changing more than 100 unless --yes.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recon.errors import ConfigError, ReconError, UsageError
from recon.findings.selection import (
    AccountName,
    DbPath,
    Keys,
    Selection,
    Yes,
    confirm,
    guard,
    require_note,
    select_findings,
    warehouse_paths,
    with_selection,
)

if TYPE_CHECKING:
    from recon.findings.acks import AckEvent, NewEvent
    from recon.fx import Rates

app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Work off findings as a team: list, acknowledge, assign, resolve (audited), "
    "round-trip through Excel, verify the audit trail.",
)


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

    raise typer.Exit(guard(go))


def _apply(log: Path, events: list[NewEvent]) -> tuple[int, list[AckEvent]]:
    """Append `events` under the trail's lock, but not those that only repeat the standing
    decision (recon.findings.work.repeats): (lines written, the decisions repeated)."""
    from recon.findings.acks import AckLog
    from recon.findings.work import repeats, work_events

    trail = AckLog(log)
    today = datetime.now(UTC).date()
    with trail.locked():  # no decision lands between this check and the write
        works = work_events(trail.read())
        fresh: list[NewEvent] = []
        again: list[AckEvent] = []
        for event in events:
            standing = repeats(works.get(event.finding_key), event, today)
            if standing is None:
                fresh.append(event)
            else:
                again.append(standing)
        trail.append_events(fresh)
    return len(fresh), again


def _already(again: list[AckEvent], verb: str) -> None:
    """Say which findings were left as they were: the action only repeated a decision."""
    for e in again[:20]:
        typer.echo(f"{e.finding_key}: already {verb} by {e.who} on {e.at:%Y-%m-%d}; no change")
    if len(again) > 20:
        typer.echo(f"… and {len(again) - 20:,} more already {verb}; no change")


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
    from recon.findings.acks import NewEvent

    def go() -> int:
        text = require_note(note, "acknowledged")
        day = _until(until)
        log, found = sel.chosen("acknowledging", keys, yes)
        events = [NewEvent("ack", f.finding_key, f.amounts, note=text, until=day) for f in found]
        written, again = _apply(log, events)
        _already(again, "acknowledged")
        typer.echo(f"acknowledged {written} finding(s); audit trail: {log}")
        return 0

    raise typer.Exit(guard(go))


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
    from recon.findings.acks import NewEvent

    def go() -> int:
        if to is None or not to.strip():
            raise ConfigError("--to", "must name who investigates the findings")
        log, found = sel.chosen("assigning", keys, yes)
        text = note.strip() if note else None
        events = [
            NewEvent("assign", f.finding_key, f.amounts, note=text, owner=to.strip()) for f in found
        ]
        written, again = _apply(log, events)
        _already(again, f"assigned to {to.strip()}")
        typer.echo(f"assigned {written} finding(s) to {to.strip()}; audit trail: {log}")
        return 0

    raise typer.Exit(guard(go))


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
    from recon.findings.acks import NewEvent
    from recon.findings.work import REASONS

    def go() -> int:
        if reason not in REASONS:
            raise ConfigError("--reason", f"must be one of {', '.join(REASONS)}")
        text = require_note(note, "resolved")
        log, found = sel.chosen("resolving", keys, yes)
        events = [
            NewEvent("resolve", f.finding_key, f.amounts, note=text, reason=reason) for f in found
        ]
        written, again = _apply(log, events)
        _already(again, "resolved manually")
        typer.echo(f"resolved {written} finding(s) manually ({reason}); audit trail: {log}")
        return 0

    raise typer.Exit(guard(go))


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
                for f in select_findings(warehouse, log, keys or [], filters)
                if worked(f.finding_key)
            ]
        confirm("reopening", len(chosen), filters, yes)
        AckLog(log).append("unack", [(k, None) for k in chosen], note=note)
        typer.echo(f"reopened {len(chosen)} finding(s); audit trail: {log}")
        return 0

    raise typer.Exit(guard(go))


@app.command()
def verify(
    db: DbPath = None,
    account: AccountName = None,
    reports: Annotated[
        Path | None,
        typer.Option(help="The reports folder whose summaries and close packs hold chain heads."),
    ] = None,
) -> None:
    """Check the audit trail: its hash chain, the warehouse's record of every line, every
    chain head the reports and close packs wrote down (and seals, with RECON_TRAIL_KEY):
    exit 0 if intact, 1 naming the first line that was edited, removed, added or reordered."""
    from recon.findings.acks import AckLog, trail_key
    from recon.findings.verify import gather_evidence, verify_trail

    def go() -> int:
        warehouse, log = warehouse_paths(db, account)
        folder = reports or _reports(db, account)
        with AckLog(log).locked(create=False):  # no action half-written
            report = verify_trail(log, evidence=gather_evidence(warehouse, folder), key=trail_key())
        for note in report.notes:
            typer.echo(f"note: {note}", err=True)
        if not report.intact:
            typer.echo(f"recon: audit trail {log}: {report.problem}", err=True)
            return 1
        typer.echo(f"audit trail intact: {report.lines:,} line(s) in {log}")
        return 0

    raise typer.Exit(guard(go))


def _reports(db: Path | None, account: str | None) -> Path | None:
    """The reports folder of the warehouse (of `account`), where chain heads are written."""
    from recon.settings import load_settings

    try:
        if account is not None:
            from recon.group.accounts import account_settings

            return account_settings(account, {}, secrets=False).reports
        return load_settings(**({"db": str(db)} if db else {})).reports
    except ReconError:
        return None
