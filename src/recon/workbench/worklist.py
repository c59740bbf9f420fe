"""The Excel round trip: a worklist of findings to fill in, and applying it.

`write_worklist` writes one sheet, `Worklist`, a row per finding: what it is (key, check,
state, owner, amount in major units with its currency's format, first seen, detail, why a
decision lapsed) — locked — and five columns to fill in, unlocked: **action** (`ack`,
`assign`, `resolve`, `unack`, `match` — a `ledger_suggested_match` row's proposal
accepted as `recon match KEY` does; a drop-down), **owner**, **reason** (a drop-down of the reason
codes), **note**, **until** (a date). The sheet is protected without a password (it guards
against slips, not people): sorting and filtering still work. A hidden column `version`
holds what the row was exported against: the finding's amounts and its latest decision.

`apply_worklist` reads the filled rows back. A row is refused, with its row number and
reason, when its finding is no longer an unresolved finding of the latest run or changed
since the export (amounts, or someone decided on it meanwhile), when its action is unknown,
or when what the action needs is missing (a note for ack and resolve, a reason code for
resolve, an owner for assign, a valid future date for until). A row whose decision is
already the finding's latest (the same file imported again, or by two people at once) is
"already applied": not refused, not written twice. The other rows are applied, as one
append to the audit trail; the trail is read, the rows checked and the lines written under
the trail's lock, so two imports of one worklist at once apply it once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import xlsxwriter  # type: ignore[import-untyped,unused-ignore]

from recon.errors import ConfigError
from recon.findings.acks import AckLog, NewEvent
from recon.findings.listing import Finding, list_findings
from recon.findings.work import REASONS, WORK_ACTIONS, Work, repeats, work_events
from recon.output.atomic import atomic_path
from recon.output.excel import WORKBOOK_OPTIONS, major_units, number_format
from recon.report.privacy import scrub_text

__all__ = [
    "EXCEL_MAX_ROWS",
    "SHEET",
    "ImportResult",
    "apply_worklist",
    "row_version",
    "write_worklist",
]

SHEET = "Worklist"
SHOWN = (
    ("key", 44),
    ("check", 28),
    ("state", 16),
    ("current owner", 14),
    ("currency", 9),
    ("amount", 14),
    ("first seen", 11),
    ("detail", 50),
    ("lapsed", 30),
)
EDITABLE = (("action", 10), ("owner", 14), ("reason", 14), ("note", 40), ("until", 12))
VERSION = "version"
HEADER = [n for n, _ in SHOWN] + [n for n, _ in EDITABLE] + [VERSION]
_LISTED: Any = Work(None, None)  # row_version's default: the finding as it was listed
_VERBS = {
    "ack": "acknowledged",
    "assign": "assigned",
    "resolve": "resolved manually",
    "unack": "reopened",
    "match": "matched",
}
ACTIONS = (*WORK_ACTIONS, "match")  # match: accept a ledger_suggested_match's proposal


def row_version(f: Finding, work: Work | None = _LISTED) -> str:
    """What a row was exported against: its amounts and the latest decision on it (`work`:
    the trail's as read now; by default the one the finding was listed with)."""
    a = f.amounts
    if work is _LISTED:
        seq = f.ack.seq if f.ack else 0
    else:
        seq = work.event.seq if work is not None and work.event is not None else 0
    money = hashlib.sha256(repr((a.currency, a.amount_minor, a.sides)).encode()).hexdigest()
    return f"{seq}:{money[:16]}"


#: Rows an Excel sheet holds, its header included: a worklist holds one fewer findings.
EXCEL_MAX_ROWS = 1_048_576


def write_worklist(
    findings: Iterable[Finding],
    out: Path,
    *,
    filters: str = "",
    personal: Mapping[str, list[str]] | None = None,
    count: int | None = None,
) -> int:
    """Write the worklist for `findings` to `out` (atomically); the number of rows. Details
    pass through recon.report.privacy like the reports' (`personal`: per finding key, the
    personal values of its record that its detail quotes). Rows are written as they come
    (xlsxwriter's constant memory mode): `findings` may be a stream of a million, `count`
    of them (for the sheet's ranges; counted when not given)."""
    if count is None:
        findings = list(findings)
        count = len(findings)
    if count >= EXCEL_MAX_ROWS:
        raise ConfigError(
            "OUT", f"{count:,} findings: more than an Excel sheet holds ({EXCEL_MAX_ROWS - 1:,})"
        )
    with atomic_path(out) as tmp:
        wb = xlsxwriter.Workbook(str(tmp), {**WORKBOOK_OPTIONS, "constant_memory": True})
        try:
            _write(wb, findings, count, filters, personal or {})
        finally:
            wb.close()
    return count


def _write(
    wb: Any,
    findings: Iterable[Finding],
    count: int,
    filters: str,
    personal: Mapping[str, list[str]],
) -> None:
    ws = wb.add_worksheet(SHEET)
    head = wb.add_format({"bold": True, "bg_color": "#E7ECF2", "border": 1})
    edit_head = wb.add_format({"bold": True, "bg_color": "#FFF2CC", "border": 1})
    editable = wb.add_format({"locked": False, "bg_color": "#FFFBEA"})
    edit_date = wb.add_format({"locked": False, "bg_color": "#FFFBEA", "num_format": "yyyy-mm-dd"})
    day = wb.add_format({"num_format": "yyyy-mm-dd"})
    money: dict[str, Any] = {}
    first_edit = len(SHOWN)
    for col, (name, width) in enumerate([*SHOWN, *EDITABLE]):
        ws.write_string(0, col, name, edit_head if col >= first_edit else head)
        ws.set_column(col, col, width)
    version_col = len(HEADER) - 1
    ws.write_string(0, version_col, VERSION, head)
    ws.set_column(version_col, version_col, 20, None, {"hidden": True})
    for row, f in enumerate(findings, start=1):
        texts = [f.finding_key, f.check_name, f.work_state, f.owner or "", f.currency or ""]
        for col, text in enumerate(texts):
            ws.write_string(row, col, text)
        amount = major_units(f.amount_minor, f.currency)
        if amount is not None:
            key = str(f.currency)
            if key not in money:
                money[key] = wb.add_format({"num_format": number_format(f.currency)})
            ws.write_number(row, 5, float(amount), money[key])
        if f.first_seen_at is not None:
            ws.write_datetime(row, 6, f.first_seen_at.astimezone(UTC).replace(tzinfo=None), day)
        ws.write_string(row, 7, scrub_text(f.detail, personal.get(f.finding_key, ())) or "")
        ws.write_string(row, 8, f.lapsed or "")
        for col in range(first_edit, first_edit + len(EDITABLE)):
            ws.write_blank(row, col, None, edit_date if col == version_col - 1 else editable)
        ws.write_string(row, first_edit + 1, f.owner or "", editable)
        ws.write_string(row, version_col, row_version(f))
    last = max(count, 1)
    ws.data_validation(
        1, first_edit, last, first_edit,
        {"validate": "list", "source": list(ACTIONS), "ignore_blank": True},
    )  # fmt: skip
    ws.data_validation(
        1, first_edit + 2, last, first_edit + 2,
        {"validate": "list", "source": list(REASONS), "ignore_blank": True},
    )  # fmt: skip
    ws.freeze_panes(1, 1)
    ws.autofilter(0, 0, last, version_col - 1)
    ws.protect("", {"autofilter": True, "sort": True, "format_columns": True})
    about = wb.add_worksheet("About")
    lines = [
        "recon findings worklist",
        f"exported {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {count:,} finding(s); "
        f"filters: {filters or 'none'}",
        "Fill in the yellow columns, then: recon findings import <this file>",
        "action: ack (note, optional until), assign (owner), resolve (reason, note), unack, "
        "match (note; a ledger_suggested_match row: its proposal accepted)",
        f"reason codes: {', '.join(REASONS)}",
        "A row whose finding changed since this export is refused: export again.",
    ]
    for row, text in enumerate(lines):
        about.write_string(row, 0, text)
    about.set_column(0, 0, 100)


@dataclass
class ImportResult:
    """What `apply_worklist` did: rows applied per action, rows refused with why."""

    applied: list[tuple[int, str, str]] = field(default_factory=list)  # row, action, key
    refused: list[tuple[int, str]] = field(default_factory=list)  # row, reason
    blank: int = 0
    already: list[tuple[int, str, str]] = field(default_factory=list)  # row, action, key

    def lines(self) -> Iterable[str]:
        for row, action, key in self.applied:
            yield f"row {row}: {_VERBS[action]} {key}"
        for row, action, key in self.already:
            yield f"row {row}: already applied ({_VERBS[action]} {key}): nothing written"
        for row, reason in self.refused:
            yield f"row {row}: refused: {reason}"
        counts: dict[str, int] = {}
        for _, action, _ in self.applied:
            counts[action] = counts.get(action, 0) + 1
        what = ", ".join(f"{n} {_VERBS[a]}" for a, n in sorted(counts.items())) or "nothing"
        again = f"; {len(self.already)} already applied" if self.already else ""
        yield (
            f"applied {len(self.applied)} row(s) ({what}){again}; refused {len(self.refused)}; "
            f"{self.blank} row(s) without an action left as they were"
        )


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _day(value: Any) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    text = str(value).strip()
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        raise ValueError(f"until {text!r} is not a date (YYYY-MM-DD)") from None


def _read_rows(path: Path) -> list[dict[str, Any]]:
    import fastexcel

    if not path.is_file():
        raise ConfigError("WORKLIST", f"{path}: no such file")
    try:
        reader = fastexcel.read_excel(str(path))
        if SHEET not in reader.sheet_names:
            raise ConfigError("WORKLIST", f"{path.name} has no sheet {SHEET!r}: not a worklist")
        sheet = reader.load_sheet_by_name(SHEET, dtypes="string")
    except ConfigError:
        raise
    except Exception as exc:  # fastexcel's errors share no base class
        raise ConfigError("WORKLIST", f"{path.name} cannot be read as .xlsx: {exc}") from None
    table = sheet.to_arrow()
    data = table.to_pylist()
    missing = [c for c in ("key", "action", "owner", "reason", "note", "until", VERSION)
               if c not in table.column_names]  # fmt: skip
    if missing:
        raise ConfigError("WORKLIST", f"{path.name} lacks column(s) {', '.join(missing)}")
    return list(data)


def _check(
    row: dict[str, Any], f: Finding | None, today: date, work: Work | None
) -> NewEvent | str:
    """The event a filled row asks for, or why it is refused (`work`: the trail's latest
    decision on the finding, read under the trail's lock)."""
    action = _cell(row.get("action")).lower()
    key = _cell(row.get("key"))
    if action not in WORK_ACTIONS:
        return f"unknown action {action!r} (one of {', '.join(ACTIONS)})"
    if f is None:
        return f"{key or 'the key'} is no longer an unresolved finding of the latest run"
    note = _cell(row.get("note")) or None
    owner = _cell(row.get("owner")) or None
    reason = _cell(row.get("reason")).lower() or None
    try:
        until = _day(row.get("until"))
    except ValueError as exc:
        return str(exc)
    if until is not None and (action != "ack" or until < today):
        return f"until {until} " + ("has already passed" if action == "ack" else "is for ack only")
    if action in ("ack", "resolve") and note is None:
        return f"{action} needs a note saying why"
    if action == "resolve" and reason not in REASONS:
        return f"resolve needs a reason code ({', '.join(REASONS)}), not {reason or 'none'}"
    if action == "assign" and owner is None:
        return "assign needs an owner"
    event = NewEvent(
        action,
        f.finding_key,
        None if action == "unack" else f.amounts,
        note=note,
        until=until,
        owner=owner if action == "assign" else None,
        reason=reason if action == "resolve" else None,
    )
    if repeats(work, event, today) is None and _cell(row.get(VERSION)) != row_version(f, work):
        return f"{key} changed since the export (its amounts or a decision on it): export again"
    return event


def apply_worklist(path: Path, db: Path, log: Path) -> ImportResult:
    """Apply the worklist at `path` to the trail `log` of warehouse `db`."""
    rows = _read_rows(path)
    found = {f.finding_key: f for f in list_findings(db, log)}
    today = datetime.now(UTC).date()
    result = ImportResult()
    trail = AckLog(log)
    with trail.locked():  # what was decided meanwhile is read, checked and appended at once
        works = work_events(trail.read())
        matched = _matched_orders(trail)
        events: list[NewEvent] = []
        matches: list[tuple[int, str, str]] = []
        seen: set[str] = set()
        for n, row in enumerate(rows, start=2):  # row 1 is the header
            if not _cell(row.get("action")):
                result.blank += 1
                continue
            key = _cell(row.get("key"))
            if _cell(row.get("action")).lower() == "match":
                _check_match(n, row, found.get(key), matched, seen, matches, result)
                continue
            checked = _check(row, found.get(key), today, works.get(key))
            if isinstance(checked, str):
                result.refused.append((n, checked))
            elif key in seen:
                result.refused.append((n, f"{key} is on an earlier row too"))
            elif repeats(works.get(key), checked, today) is not None:
                seen.add(key)
                result.already.append((n, checked.action, key))
            else:
                seen.add(key)
                events.append(checked)
                result.applied.append((n, checked.action, key))
        trail.append_events(events, at=datetime.now(UTC))
        for n, key, note in matches:
            _apply_match(n, key, note, db, log, result)
    return result


_SUGGESTION = "ledger_suggested_match:"


def _matched_orders(trail: AckLog) -> set[str]:
    """The orders matched by hand now (their latest match/unmatch line is a match)."""
    latest: dict[str, str] = {}
    for line in trail.records(["match", "unmatch"]):
        latest[str(line.get("order"))] = str(line["action"])
    return {order for order, action in latest.items() if action == "match"}


def _check_match(
    n: int,
    row: dict[str, Any],
    f: Finding | None,
    matched: set[str],
    seen: set[str],
    matches: list[tuple[int, str, str]],
    result: ImportResult,
) -> None:
    """A `match` row: queued, already applied, or refused with why."""
    key = _cell(row.get("key"))
    note = _cell(row.get("note")) or None
    order = key.removeprefix(_SUGGESTION).rpartition(":")[0]
    if not key.startswith(_SUGGESTION):
        result.refused.append(
            (n, "match is for ledger_suggested_match rows (else: recon match ORDER PAYMENT)")
        )
    elif order in matched:
        result.already.append((n, "match", key))
    elif f is None:
        result.refused.append((n, f"{key} is no longer an unresolved finding of the latest run"))
    elif note is None:
        result.refused.append((n, "match needs a note saying why"))
    elif key in seen:
        result.refused.append((n, f"{key} is on an earlier row too"))
    else:
        seen.add(key)
        matches.append((n, key, note))


def _apply_match(n: int, key: str, note: str, db: Path, log: Path, result: ImportResult) -> None:
    """Accept the proposal of `key` (recon.ledger.manual: checked, applied at once)."""
    from recon.config.settings import load_settings
    from recon.ledger.manual import Tolerance, match_suggestion

    settings = load_settings(db=str(db))
    tolerance = Tolerance(settings.ledger_tolerance_minor, settings.ledger_tolerance_bps)
    try:
        match_suggestion(db, log, key, note, tolerance=tolerance)
    except ConfigError as exc:
        result.refused.append((n, exc.problem))
        return
    result.applied.append((n, "match", key))
