"""`recon findings list|ack|unack|assign|resolve|export|import|verify`: the exceptions a team
works off, every decision one line of a hash-chained audit trail.

Every action takes the keys it names and/or the filters of `findings list` (--check,
--currency, --older-than, --state, --owner), says how many findings it will change, and
asks before changing more than 100 unless --yes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

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
    from recon.findings.listing import Finding
    from recon.money.fx import Rates
    from recon.workbench.base import Target
    from recon.workbench.rules import Actor
    from recon.workbench.service import Workbench, WorkDone

app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Work off findings as a team: list, acknowledge, assign, resolve (audited), "
    "round-trip through Excel, verify the audit trail.",
)


def _rates(db: Path | None) -> Rates | None:
    from recon.config.settings import load_settings
    from recon.money.fx import load_rates

    path = load_settings(**({"db": str(db)} if db else {})).fx_rates
    return load_rates(path) if path is not None else None


ListFormat = Annotated[
    str,
    typer.Option(
        "--format",
        help="table (for people: a header row, one finding a line), csv (spreadsheet-safe) "
        "or json (an array of objects); csv and json carry every column.",
    ),
]
FORMATS = ("table", "csv", "json")


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
    fmt: ListFormat = "table",
    *,
    sel: Selection,
) -> None:
    """List the latest run's unresolved findings: work state, severity, amount, how long recon
    has known each (known_days) and the item's own age (item_age_days), owner. Streamed: a
    million findings are listed a batch at a time (--sort converted sorts in memory)."""
    from recon.findings.listing import iter_findings
    from recon.findings.order import SORTS, sort_findings
    from recon.findings.output import FindingsWriter

    def go() -> int:
        if fmt not in FORMATS:
            raise UsageError("--format", f"must be one of {', '.join(FORMATS)}, not {fmt!r}")
        if sort not in SORTS:
            raise UsageError("--sort", f"must be one of {', '.join(SORTS)}, not {sort!r}")
        warehouse, log = sel.paths()
        rates = _rates(sel.db)
        if sort == "converted":
            sort_findings([], sort, rates)  # no rates: refused before anything is read
        stream = iter_findings(
            warehouse, log, filters=sel.filters(), order=None if sort == "converted" else sort
        )
        found = sort_findings(list(stream), sort, rates) if sort == "converted" else stream
        items = iter(found)
        first = next(items, None)  # a refused --check or a missing warehouse: before the header
        writer = FindingsWriter(fmt, rates)
        writer.start()
        if first is not None:
            writer.write(first)
        for f in items:
            writer.write(f)
        writer.end()
        c = writer.counts
        back = f", {c['reopened']:,} reopened" if c["reopened"] else ""
        typer.echo(
            f"{c['open']:,} open ({c['new']:,} new{back}), {c['investigating']:,} investigating, "
            f"{c['acknowledged']:,} acknowledged, {c['resolved_manually']:,} resolved manually",
            err=True,
        )
        return 0

    raise typer.Exit(guard(go))


def _service(sel: Selection, action: str) -> tuple[Workbench, Actor]:
    """The workbench's service on the selected warehouse, and who acts from this command
    line (recon.workbench.rules.cli_actor), refused at once if their role may not `action`."""
    from recon.workbench.rules import may
    from recon.workbench.service import for_cli

    warehouse, _ = sel.paths()
    bench, actor = for_cli(warehouse)
    may(actor, action)
    return bench, actor


def _target(f: Finding) -> Target:
    from recon.workbench.base import Target

    return Target(f.finding_key, f.amounts, f.currency, f.amount_minor)


def _said(done: WorkDone, verb: str) -> None:
    """Say which findings were left as they were (the action only repeated a decision, or
    its proposal already waits) and which proposals it made."""
    for e in done.again:
        typer.echo(f"{e.finding_key}: already {verb} by {e.who} on {e.at:%Y-%m-%d}; no change")
    if done.repeated > len(done.again):
        typer.echo(f"… and {done.repeated - len(done.again):,} more already {verb}; no change")
    for key, pid in done.waiting:
        typer.echo(f"{key}: already proposed ({pid}), waiting for an approver; no change")
    if done.waited > len(done.waiting):
        typer.echo(f"… and {done.waited - len(done.waiting):,} more already proposed; no change")
    if done.proposed:
        more = (
            f" and {done.proposed - len(done.proposals):,} more"
            if done.proposed > len(done.proposals)
            else ""
        )
        typer.echo(
            f"proposed {done.proposed:,} resolution(s) for an approver (four eyes): "
            f"{', '.join(done.proposals)}{more}; an approver decides: recon proposals"
        )


def _act(
    sel: Selection,
    keys: Sequence[str] | None,
    yes: bool,
    *,
    action: str,
    doing: str,
    already: str,
    done: str,
    **fields: Any,
) -> None:
    """One decision on the findings `keys` or the filters choose (asked for above the
    confirmation bound), taken through the workbench's service (recon.workbench.service:
    the roles, the four eyes, the trail's lock; where it only repeats the standing decision,
    nothing); says what was done: `done` with `{n}`, the lines applied."""
    bench, actor = _service(sel, action)
    log, found = sel.chosen(doing, keys, yes)
    result = bench.work(actor, action, (_target(f) for f in found), **fields)
    _said(result, already)
    typer.echo(f"{done.format(n=result.applied)}; audit trail: {log}")


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

    def go() -> int:
        text = require_note(note, "acknowledged")
        day = _until(until)
        _act(
            sel,
            keys,
            yes,
            action="ack",
            doing="acknowledging",
            already="acknowledged",
            done="acknowledged {n} finding(s)",
            note=text,
            until=day,
        )
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

    def go() -> int:
        if to is None or not to.strip():
            raise ConfigError("--to", "must name who investigates the findings")
        owner = to.strip()
        _act(
            sel,
            keys,
            yes,
            action="assign",
            doing="assigning",
            already=f"assigned to {owner}",
            done=f"assigned {{n}} finding(s) to {owner}",
            note=note.strip() if note else None,
            owner=owner,
        )
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
    from recon.findings.work import REASONS

    def go() -> int:
        if reason not in REASONS:
            raise ConfigError("--reason", f"must be one of {', '.join(REASONS)}")
        text = require_note(note, "resolved")
        _act(
            sel,
            keys,
            yes,
            action="resolve",
            doing="resolving",
            already="resolved manually",
            done=f"resolved {{n}} finding(s) manually ({reason})",
            note=text,
            reason=reason,
        )
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
    from recon.findings.acks import AckLog, Amounts
    from recon.findings.work import work_events
    from recon.workbench.base import Target

    def go() -> int:
        bench, actor = _service(sel, "unack")
        warehouse, log = sel.paths()
        filters = sel.filters()
        works = work_events(AckLog(log).iter_events())

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
        nothing = Amounts(None, None, None)
        targets = (Target(k, nothing, None, None) for k in chosen)
        result = bench.work(actor, "unack", targets, note=note)
        typer.echo(f"reopened {result.applied} finding(s); audit trail: {log}")
        return 0

    raise typer.Exit(guard(go))


@app.command()
def comment(
    keys: Annotated[list[str], typer.Argument(help="Finding keys (check:entity_id:issue).")],
    note: Annotated[
        str | None, typer.Option("--note", help="The comment (kept in the audit trail).")
    ] = None,
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Comment on findings: a line of their trail; their state does not change."""

    def go() -> int:
        if note is None or not note.strip():
            raise ConfigError("--note", "must say what the comment is")
        text = note.strip()
        bench, actor = _service(Selection(db=db, account=account), "comment")
        for key in dict.fromkeys(keys):
            bench.comment(actor, key, text)
        typer.echo(f"commented on {len(set(keys))} finding(s); audit trail: {bench.trail.path}")
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
    from recon.config.settings import load_settings

    try:
        if account is not None:
            from recon.config.accounts import account_settings

            return account_settings(account, {}, secrets=False).reports
        return load_settings(**({"db": str(db)} if db else {})).reports
    except ReconError:
        return None
