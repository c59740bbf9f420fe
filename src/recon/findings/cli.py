"""`recon findings list|ack|unack`: the exceptions analysts work off, with an audit trail."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recon.errors import ConfigError, ReconError, UsageError

if TYPE_CHECKING:
    from recon.fx import Rates

app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Work off findings: list them, acknowledge them with a note (audited).",
)

DbPath = Annotated[
    Path | None, typer.Option("--db", help="Warehouse file (RECON_DB).", dir_okay=False)
]


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


AccountName = Annotated[
    str | None,
    typer.Option("--account", help="The account whose findings (with [accounts] in recon.toml)."),
]


def _paths(db: Path | None, account: str | None = None) -> tuple[Path, Path]:
    from recon.findings.acks import acks_path
    from recon.group.accounts import account_db, account_names
    from recon.settings import load_settings

    if account is not None:
        found = account_db(account)
        return found, acks_path(found)
    if db is None and (names := account_names()):
        raise ConfigError(
            "--account", f"recon.toml has several accounts: name one ({', '.join(names)})"
        )
    settings = load_settings(**({"db": str(db)} if db else {}))
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


@app.command("list")
def list_(
    check: Annotated[str | None, typer.Option(help="Only this check's findings.")] = None,
    state: Annotated[
        str | None, typer.Option(help="open (new included), new or acknowledged.")
    ] = None,
    older_than: Annotated[
        str | None, typer.Option(help="First seen longer ago than this: 7d, 12h, 2w.")
    ] = None,
    sort: Annotated[
        str,
        typer.Option(
            help="severity (then oldest first), amount (per currency, largest first) or "
            "converted (largest first across currencies, with RECON_FX_RATES).",
        ),
    ] = "severity",
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """List the latest run's unresolved findings with their state (acknowledged ones too)."""
    from recon.findings.listing import list_findings, parse_age
    from recon.findings.order import sort_findings

    def go() -> int:
        warehouse, log = _paths(db, account)
        rates = _rates(db)
        age = parse_age(older_than) if older_than else None
        found = list_findings(warehouse, log, check=check, state=state, older_than=age)
        for f in sort_findings(found, sort, rates):
            seen = f.first_seen_at.date().isoformat() if f.first_seen_at else "?"
            converted = rates.label(f.amount_minor, f.currency) if rates else None
            line = (
                f"{f.work_state:<12} {f.finding_key}  {_money(f.amount_minor, f.currency)}"
                f"{f' ({converted})' if converted else ''}  since {seen}  {f.detail or ''}"
            )
            if f.acknowledged and f.ack is not None:
                until = f", until {f.ack.until}" if f.ack.until else ""
                line += f"  [acknowledged by {f.ack.who} {f.ack.at:%Y-%m-%d}{until}: {f.ack.note}]"
            typer.echo(line)
        acked = sum(f.acknowledged for f in found)
        new = sum(f.work_state == "new" for f in found)
        typer.echo(f"{len(found) - acked:,} open ({new:,} new), {acked:,} acknowledged", err=True)
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


def _known(db: Path, log: Path, keys: Sequence[str]) -> dict[str, object]:
    from recon.findings.listing import list_findings

    found = {f.finding_key: f for f in list_findings(db, log, keys=keys)}
    unknown = [k for k in keys if k not in found]
    if unknown:
        raise UsageError(
            "FINDING_KEY",
            f"unknown finding key {', '.join(unknown)}: not an unresolved finding of the "
            "latest run (`recon findings list` shows their keys)",
        )
    return dict(found)


@app.command()
def ack(
    keys: Annotated[list[str], typer.Argument(help="Finding keys (check:entity_id:issue).")],
    note: Annotated[str, typer.Option("--note", help="Why (kept in the audit trail).")],
    until: Annotated[str | None, typer.Option(help="Reopen after this day (YYYY-MM-DD).")] = None,
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Acknowledge findings: they stay listed, counted apart, until their amounts change."""
    from recon.findings.acks import AckLog
    from recon.findings.listing import Finding

    def go() -> int:
        if not note.strip():
            raise ConfigError("--note", "must say why the findings are acknowledged")
        day = _until(until)
        warehouse, log = _paths(db, account)
        found = _known(warehouse, log, keys)
        entries = [(k, f.amounts) for k, f in found.items() if isinstance(f, Finding)]
        AckLog(log).append("ack", entries, note=note.strip(), until=day)
        typer.echo(f"acknowledged {len(entries)} finding(s); audit trail: {log}")
        return 0

    raise typer.Exit(_guard(go))


@app.command()
def unack(
    keys: Annotated[list[str], typer.Argument(help="Finding keys to reopen.")],
    note: Annotated[str | None, typer.Option("--note", help="Why (optional).")] = None,
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Withdraw acknowledgements: the findings are open again (audited)."""
    from recon.findings.acks import AckLog, current_acks

    def go() -> int:
        _, log = _paths(db, account)
        latest = current_acks(AckLog(log).read())
        unknown = [k for k in keys if k not in latest or latest[k].action != "ack"]
        if unknown:
            raise UsageError("FINDING_KEY", f"{', '.join(unknown)}: not acknowledged")
        AckLog(log).append("unack", [(k, None) for k in keys], note=note)
        typer.echo(f"reopened {len(keys)} finding(s); audit trail: {log}")
        return 0

    raise typer.Exit(_guard(go))
