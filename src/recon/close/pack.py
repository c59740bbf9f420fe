"""The close pack of a period, its sign-off and its freezing.

`close_period` computes the figures (recon.close.period), writes
`<reports>/close-YYYY-MM/close.xlsx` and `close.html` (each atomically), and with a
sign-off appends one `close` line to the audit trail carrying the SHA-256 of both files.
A signed-off period is frozen: closing it again is refused (ClosedError) until it is
reopened, which is one `reopen` line in the trail with its note. A period holding a run
that is not complete is closed only when the caller accepts it, and the cover says so; a
night that failed before it read anything, followed by a complete night, is listed on the
cover and does not hold the close up.

A period is signed off only once it has ended (before: `provisional`, and marked so on the
cover and in its `close` line). A sign-off holds the night lock (recon.warehouse.nightlock):
no night publishes while its figures are read. Every pack shows the audit trail's chain
head as it stood (recon findings verify checks the trail against it); the `close` line
records it too, and who signed (`who`: RECON_USER or os:<name>) beside the name given.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

from recon.close.period import Period, PeriodFigures, compute_period, manual_resolutions
from recon.errors import ConfigError, ReconError
from recon.findings.acks import AckEvent, AckLog, NewEvent, who_acts
from recon.money.shown import format_amount
from recon.output.atomic import atomic_write_text
from recon.output.excel import Sheet, write_xlsx
from recon.warehouse.database import open_readonly
from recon.warehouse.nightlock import night_lock

__all__ = ["ClosePaths", "ClosedError", "SignOff", "close_period", "period_key", "period_status"]

SHEETS = (
    "Summary",
    "Roll-forward",
    "Roll-forward items",
    "Open at cut-off",
    "Resolved in period",
    "Resolved manually",
    "Matched by rule",
    "Provider activity",
    "Books activity",
    "Cash",
)


class ClosedError(ReconError):
    """The period is signed off: its pack is frozen."""


@dataclass(frozen=True)
class SignOff:
    """Who signs the period off, and their note."""

    name: str
    note: str
    provisional: bool = False


@dataclass(frozen=True)
class ClosePaths:
    """What `close_period` wrote."""

    folder: Path
    xlsx: Path
    html: Path
    figures: PeriodFigures
    signed: bool


def period_key(period: Period) -> str:
    """The trail key of a period's `close` and `reopen` lines."""
    return f"period:{period.name}"


def period_status(events: Iterable[AckEvent], period: Period) -> AckEvent | None:
    """The `close` line that froze `period`, if it still stands (no `reopen` after it).
    `events` may be a stream (`AckLog.iter_events()`): one is held at a time."""
    latest = None
    for e in events:
        if e.finding_key == period_key(period) and e.action in ("close", "reopen"):
            latest = e
    return latest if latest is not None and latest.action == "close" else None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _summary(figures: PeriodFigures, cover: dict[str, Any]) -> pa.Table:
    items: list[tuple[str, str]] = [
        ("period", f"{figures.period.name} (UTC {figures.period.start:%Y-%m-%d} to "
                   f"{figures.period.last_day:%Y-%m-%d})"),
        ("status", cover["status"]),
    ]  # fmt: skip
    if cover.get("account"):
        items.insert(0, ("account", str(cover["account"])))
    if cover.get("signed_by"):
        items.append(("signed off by", f"{cover['signed_by']} on {cover['signed_at']}"))
        items.append(("recorded as", str(cover["signed_as"])))
        items.append(("sign-off note", cover["note"]))
    opening = figures.opening
    items.append(("opening run", f"{opening.run_id}" if opening else "none (nothing open)"))
    cutoff = figures.cutoff
    items.append(("cut-off run", cutoff.run_id if cutoff else "none"))
    items.append(("runs in period", str(len(figures.in_period))))
    items.append(("days without a run", figures.missing_ranges or "none"))
    for r in figures.incomplete:
        items.append(("INCOMPLETE night (accepted)", f"{r.run_id}: {r.status} — {r.reason or ''}"))
    for a in figures.after_sign_off:
        items.append(("AFTER SIGN-OFF", a.line()))
    for r in figures.superseded:
        items.append(
            ("failed night (covered by a later night)", f"{r.run_id}: {r.reason or r.status}")
        )
    for row in figures.rollforward.to_pylist():
        label = f"roll-forward {row['family']} {row['currency'] or 'no currency'}"
        cur = row["currency"]
        items.append(
            (
                label,
                f"{format_amount(row['open_start_minor'], cur)} + "
                f"{format_amount(row['new_minor'], cur)} - "
                f"{format_amount(row['resolved_minor'], cur)} + "
                f"{format_amount(row['change_minor'], cur)} = "
                f"{format_amount(row['open_end_minor'], cur)}; counts "
                f"{row['open_start_count']} + {row['new_count']} - {row['resolved_count']} = "
                f"{row['open_end_count']}: {'ties' if row['ties'] else 'DOES NOT TIE'}",
            )
        )
    head = cover.get("trail_head")
    items.append(
        (
            "audit trail head",
            f"{head['lines']} line(s), {head['head']}" if head else "empty trail",
        )
    )
    items.append(("generated", cover["generated_at"]))
    return pa.table({"item": [i for i, _ in items], "value": [v for _, v in items]})


def _empty(names: list[str]) -> pa.Table:
    return pa.table({n: pa.array([], pa.string()) for n in names})


def _sheets(figures: PeriodFigures, cover: dict[str, Any]) -> list[Sheet]:
    resolved = figures.resolved_items
    manual = manual_resolutions(figures)
    return [
        Sheet("Summary", _summary(figures, cover)),
        Sheet("Roll-forward", figures.rollforward),
        Sheet("Roll-forward items", figures.rollforward_items),
        Sheet("Open at cut-off", figures.open_items),
        Sheet("Resolved in period", resolved),
        Sheet("Resolved manually", manual),
        Sheet(
            "Matched by rule",
            figures.matched_by_rule
            if figures.matched_by_rule is not None
            else _empty(["rule", "currency", "matches", "amount_minor"]),
        ),
        Sheet("Provider activity", figures.provider),
        Sheet(
            "Books activity",
            figures.books if figures.books is not None else _empty(["currency", "order_count"]),
            formats={"match_rate": "0.0%"},
        ),
        Sheet("Cash", figures.cash if figures.cash is not None else _empty(["currency"])),
    ]


#: Rows of each long list close.html shows; every row is in close.xlsx.
HTML_ROWS = 200


def _html(figures: PeriodFigures, cover: dict[str, Any]) -> str:
    from recon.report.templating import environment

    manual = manual_resolutions(figures)
    return (
        environment()
        .get_template("close.html.j2")
        .render(
            f=figures,
            cover=cover,
            rollforward=figures.rollforward.to_pylist(),
            # the first rows only, never every row as dicts
            open_items=figures.open_items.slice(0, HTML_ROWS).to_pylist(),
            open_total=figures.open_items.num_rows,
            resolved=figures.resolved_items.slice(0, HTML_ROWS).to_pylist(),
            resolved_total=figures.resolved_items.num_rows,
            manual=manual.slice(0, HTML_ROWS).to_pylist(),
            manual_total=manual.num_rows,
            provider=figures.provider.to_pylist(),
            books=figures.books.to_pylist() if figures.books is not None else None,
            cash=figures.cash.to_pylist() if figures.cash is not None else None,
            matched=figures.matched_by_rule.to_pylist()
            if figures.matched_by_rule is not None
            else None,
        )
    )


def close_period(
    db: Path,
    trail: Path,
    reports: Path,
    period: Period,
    *,
    sign_off: SignOff | None = None,
    accept_incomplete: bool = False,
    reopen_note: str | None = None,
    failed_statuses: tuple[str, ...] | None = None,
    now: datetime | None = None,
    account: str | None = None,
    who: str | None = None,
) -> ClosePaths:
    """Write the close pack of `period`; sign it off if asked. See the module docstring.
    `account` (one of `[accounts]`) is named on the cover of both files; `who` is the
    trail's author of the sign-off (the workbench's user; default: the OS user)."""
    log = AckLog(trail)
    when = (now or datetime.now(UTC)).astimezone(UTC)
    if sign_off is not None and when < period.end and not sign_off.provisional:
        raise ConfigError(
            "--sign-off",
            f"{period.name} has not ended (it ends {period.end:%Y-%m-%d %H:%M} UTC): sign it "
            "off after that, or now with --provisional (marked so)",
        )
    if sign_off is not None and sign_off.provisional and when >= period.end:
        sign_off = SignOff(sign_off.name, sign_off.note)  # ended: nothing provisional about it
    lock = night_lock(db) if sign_off is not None else contextlib.nullcontext()
    with lock:  # a sign-off: no night publishes while its figures are read
        return _close(
            db, log, reports, period, sign_off, accept_incomplete, reopen_note,
            failed_statuses, when, account, who,
        )  # fmt: skip


def _close(
    db: Path,
    log: AckLog,
    reports: Path,
    period: Period,
    sign_off: SignOff | None,
    accept_incomplete: bool,
    reopen_note: str | None,
    failed_statuses: tuple[str, ...] | None,
    when: datetime,
    account: str | None,
    who: str | None,
) -> ClosePaths:
    frozen = period_status(log.iter_events(), period)  # a line at a time: a million acks
    if frozen is not None and reopen_note is None:
        who = frozen.fields.get("signed_off_by") or frozen.who
        raise ClosedError(
            f"period {period.name} is closed: signed off by {who} on {frozen.at:%Y-%m-%d} "
            f'(pack {reports / f"close-{period.name}"}); to redo it: --reopen --note "why"'
        )
    if reopen_note is not None and frozen is None:
        raise ConfigError("--reopen", f"period {period.name} is not closed")
    con = open_readonly(db)
    try:
        kwargs = {"failed_statuses": failed_statuses} if failed_statuses else {}
        figures = compute_period(con, period, log.path, now=when, **kwargs)
    except duckdb.Error as exc:
        raise ReconError(f"cannot read the warehouse for {period.name}: {exc}") from None
    finally:
        con.close()
    if figures.incomplete and not accept_incomplete:
        runs = "; ".join(
            f"{r.run_id} ({r.status}: {r.reason or 'no reason'})" for r in figures.incomplete
        )
        raise ConfigError(
            "--accept-incomplete",
            f"{period.name} has {len(figures.incomplete)} night(s) that are not complete: {runs}; "
            "run a complete night (or recon nightly --retry-failed RUN_ID for an incomplete "
            "one that is the latest) or close with --accept-incomplete",
        )
    if reopen_note is not None:
        log.append_events([NewEvent("reopen", period_key(period), note=reopen_note)], who=who)
    with log.locked():  # the head shown is the trail's as the pack is written
        head = log.head()
        cover: dict[str, Any] = {
            "account": account,
            "status": _status(sign_off),
            "signed_by": sign_off.name if sign_off else None,
            "signed_as": (who or who_acts()) if sign_off else None,
            "provisional": bool(sign_off and sign_off.provisional),
            "signed_at": f"{when:%Y-%m-%d %H:%M} UTC",
            "note": sign_off.note if sign_off else None,
            "generated_at": f"{when:%Y-%m-%d %H:%M:%S} UTC",
            "accepted_incomplete": bool(figures.incomplete),
            "trail_head": head,
        }
        folder = reports / f"close-{period.name}"
        folder.mkdir(parents=True, exist_ok=True)
        xlsx, html = folder / "close.xlsx", folder / "close.html"
        write_xlsx(_sheets(figures, cover), xlsx)
        atomic_write_text(html, _html(figures, cover))
        if sign_off:
            log.append_events(
                [
                    NewEvent(
                        "close",
                        period_key(period),
                        note=sign_off.note,
                        fields={
                            "period": period.name,
                            "signed_off_by": sign_off.name,
                            "provisional": sign_off.provisional,
                            "close_xlsx_sha256": _sha256(xlsx),
                            "close_html_sha256": _sha256(html),
                            "cutoff_run": figures.cutoff.run_id if figures.cutoff else None,
                            "accepted_incomplete": [r.run_id for r in figures.incomplete],
                            "trail_head": head,
                        },
                    )
                ],
                at=when,
                who=who,
            )
    return ClosePaths(folder, xlsx, html, figures, signed=sign_off is not None)


def _status(sign_off: SignOff | None) -> str:
    if sign_off is None:
        return "draft (not signed off)"
    if sign_off.provisional:
        return "signed off PROVISIONALLY (before the period ended)"
    return "signed off"
