"""Applying a filled-in worklist (recon.workbench.worklist writes it): `recon findings
import`.

`apply_worklist` reads the filled rows back. A row is refused, with its row number and
reason, when its finding is no longer an unresolved finding of the latest run or changed
since the export (amounts, or someone decided on it meanwhile), when its action is unknown,
or when what the action needs is missing (a note for ack and resolve, a reason code for
resolve, an owner for assign, a valid future date for until). A row whose decision is
already the finding's latest (the same file imported again, or by two people at once) is
"already applied": not refused, not written twice. The other rows are applied through the
workbench's service (recon.workbench.service), as one append to the audit trail; the trail
is read, the rows checked and the lines written under the trail's lock, so two imports of
one worklist at once apply it once. The importer acts with their role
(recon.workbench.rules.cli_actor): under the four eyes a write-off, a resolution above the
threshold and a match become proposals ("proposed … waits for an approver"; imported
again: "already proposed"), as in the browser.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recon.errors import ConfigError
from recon.findings.acks import NewEvent
from recon.findings.listing import Finding, list_findings
from recon.findings.work import REASONS, WORK_ACTIONS, Work, repeats
from recon.workbench.base import Target
from recon.workbench.rules import Actor, may
from recon.workbench.worklist import ACTIONS, SHEET, VERBS, VERSION, row_version

if TYPE_CHECKING:
    from recon.workbench.service import Workbench

__all__ = ["ImportResult", "apply_worklist"]


@dataclass
class ImportResult:
    """What `apply_worklist` did: rows applied per action, rows refused with why."""

    applied: list[tuple[int, str, str]] = field(default_factory=list)  # row, action, key
    refused: list[tuple[int, str]] = field(default_factory=list)  # row, reason
    blank: int = 0
    already: list[tuple[int, str, str]] = field(default_factory=list)  # row, action, key
    # row, action, key, proposal: made now (four eyes), or made before and still pending
    proposed: list[tuple[int, str, str, str]] = field(default_factory=list)
    waiting: list[tuple[int, str, str, str]] = field(default_factory=list)

    def lines(self) -> Iterable[str]:
        for row, action, key in self.applied:
            yield f"row {row}: {VERBS[action]} {key}"
        for row, action, key, pid in self.proposed:
            yield f"row {row}: proposed ({VERBS[action]} {key}): {pid} waits for an approver"
        for row, action, key in self.already:
            yield f"row {row}: already applied ({VERBS[action]} {key}): nothing written"
        for row, action, key, pid in self.waiting:
            yield (f"row {row}: already proposed ({VERBS[action]} {key}, {pid}): nothing written")
        for row, reason in self.refused:
            yield f"row {row}: refused: {reason}"
        counts: dict[str, int] = {}
        for _, action, _ in self.applied:
            counts[action] = counts.get(action, 0) + 1
        what = ", ".join(f"{n} {VERBS[a]}" for a, n in sorted(counts.items())) or "nothing"
        proposed = f"; {len(self.proposed)} proposed for an approver" if self.proposed else ""
        again = f"; {len(self.already)} already applied" if self.already else ""
        waiting = f"; {len(self.waiting)} already proposed" if self.waiting else ""
        yield (
            f"applied {len(self.applied)} row(s) ({what}){proposed}{again}{waiting}; "
            f"refused {len(self.refused)}; "
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


def apply_worklist(path: Path, bench: Workbench, actor: Actor) -> ImportResult:
    """Apply the worklist at `path` through the workbench's service `bench` as `actor` (the
    roles; under the four eyes a write-off or a resolution above the threshold, and a match,
    become proposals)."""
    may(actor, "import")
    rows = _read_rows(path)
    found = {f.finding_key: f for f in list_findings(bench.db, bench.trail.path)}
    today = datetime.now(UTC).date()
    result = ImportResult()
    with bench.writing():  # what was decided meanwhile is read, checked and appended at once
        standing = bench.standing()
        matched = _matched_orders(bench, actor)
        lines: list[NewEvent] = []
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
            f = found.get(key)
            checked = _check(row, f, today, standing.works.get(key))
            if isinstance(checked, str):
                result.refused.append((n, checked))
                continue
            if key in seen:
                result.refused.append((n, f"{key} is on an earlier row too"))
                continue
            seen.add(key)
            assert f is not None
            target = Target(key, f.amounts, f.currency, f.amount_minor)
            decision = standing.decide(actor, target, checked)
            if decision.standing is not None:
                result.already.append((n, checked.action, key))
            elif decision.waiting is not None:
                result.waiting.append((n, checked.action, key, decision.waiting))
            elif decision.proposal is not None:
                result.proposed.append((n, checked.action, key, decision.proposal))
            else:
                result.applied.append((n, checked.action, key))
            if decision.line is not None:
                lines.append(decision.line)
        bench.trail.append_events(lines, who=actor.name)
        for n, key, note in matches:
            _apply_match(n, key, note, bench, actor, result)
    return result


_SUGGESTION = "ledger_suggested_match:"


def _matched_orders(bench: Workbench, actor: Actor) -> dict[str, str | None]:
    """The orders matched by hand now (their latest match/unmatch line is a match: None),
    and those whose match `actor` proposed, still pending (the proposal's id)."""
    latest: dict[str, str] = {}
    for line in bench.trail.records(["match", "unmatch"]):
        latest[str(line.get("order"))] = str(line["action"])
    out: dict[str, str | None] = {o: None for o, a in latest.items() if a == "match"}
    for p in bench.proposals():
        if p["kind"] == "match" and p["maker"] == actor.name and p["order"] not in out:
            out[str(p["order"])] = str(p["id"])
    return out


def _check_match(
    n: int,
    row: dict[str, Any],
    f: Finding | None,
    matched: Mapping[str, str | None],
    seen: set[str],
    matches: list[tuple[int, str, str]],
    result: ImportResult,
) -> None:
    """A `match` row: queued, already applied (or proposed), or refused with why."""
    key = _cell(row.get("key"))
    note = _cell(row.get("note")) or None
    order = key.removeprefix(_SUGGESTION).rpartition(":")[0]
    if not key.startswith(_SUGGESTION):
        result.refused.append(
            (n, "match is for ledger_suggested_match rows (else: recon match ORDER PAYMENT)")
        )
    elif order in matched:
        pid = matched[order]
        if pid is None:
            result.already.append((n, "match", key))
        else:
            result.waiting.append((n, "match", key, pid))
    elif f is None:
        result.refused.append((n, f"{key} is no longer an unresolved finding of the latest run"))
    elif note is None:
        result.refused.append((n, "match needs a note saying why"))
    elif key in seen:
        result.refused.append((n, f"{key} is on an earlier row too"))
    else:
        seen.add(key)
        matches.append((n, key, note))


def _apply_match(
    n: int, key: str, note: str, bench: Workbench, actor: Actor, result: ImportResult
) -> None:
    """Accept the suggestion of `key` through the service: checked and matched at once, or
    proposed under the four eyes."""
    try:
        done = bench.accept_suggestion(actor, key, note, force=False)
    except ConfigError as exc:
        result.refused.append((n, exc.problem))
        return
    if done.proposal is not None:
        result.proposed.append((n, "match", key, done.proposal))
    else:
        result.applied.append((n, "match", key))
