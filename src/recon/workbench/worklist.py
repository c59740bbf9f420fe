"""The Excel round trip: a worklist of findings to fill in (here), and applying it
(recon.workbench.importing).

`write_worklist` writes one sheet, `Worklist`, a row per finding: what it is (key, check,
state, owner, amount in major units with its currency's format, first seen, detail, why a
decision lapsed) — locked — and five columns to fill in, unlocked: **action** (`ack`,
`assign`, `resolve`, `unack`, `match` — a `ledger_suggested_match` row's proposal
accepted as `recon match KEY` does; a drop-down), **owner**, **reason** (a drop-down of the
reason codes), **note**, **until** (a date). The sheet is protected without a password (it
guards against slips, not people): sorting and filtering still work. A hidden column
`version` holds what the row was exported against: the finding's amounts and its latest
decision.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import xlsxwriter  # type: ignore[import-untyped,unused-ignore]

from recon.errors import ConfigError
from recon.findings.listing import Finding
from recon.findings.work import REASONS, WORK_ACTIONS, Work
from recon.output.atomic import atomic_path
from recon.output.excel import WORKBOOK_OPTIONS, major_units, number_format
from recon.report.privacy import scrub_text

__all__ = [
    "ACTIONS",
    "EXCEL_MAX_ROWS",
    "SHEET",
    "VERBS",
    "VERSION",
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
VERBS = {
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
