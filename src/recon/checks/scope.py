"""What a check may evaluate tonight, and what its verdict then covers.

A check reads resources (`requires`, `per_resource`). Each resource's scan this run is
complete, or not (a page failed for good, the list is not offered, nothing was scanned):

- a resource in `requires` must be complete, unless the check `tolerates` it; then the check
  runs over the records read tonight (at least one), which is exact only where a finding
  depends on records that were read — the check file's author declares where that holds;
- a `per_resource` check is judged resource by resource: a complete resource is covered
  whole, a tolerated one over the records read, any other is left out; with none covered
  the check is not evaluated;
- a mapped field that no record of a resource carries tonight (`field_presence`) makes a
  check that `requires_fields` it not evaluated (for a per-resource check: that resource is
  left out) — never a flood of findings nor a silent pass.

`plan_scope` decides; `Scope.coverage` says it in a sentence for `check_runs.coverage`,
e.g. ``19,800 payments read (offsets 400-599 could not be read); all 5,154 refunds``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import duckdb

from recon.checks.definition import CheckDefinition
from recon.config.settings import DEFAULT_FIELDS

__all__ = ["Scan", "Scope", "plan_scope", "read_presence", "read_scans"]

_SHOWN_RANGES = 3


@dataclass(frozen=True)
class Scan:
    """One resource's scan in this run, as the checks see it."""

    status: str
    reason: str | None
    failed_pages: int
    records: int
    gaps: str | None = None  # what could not be read, e.g. "offsets 400-599"

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def describe(self, resource: str) -> str:
        detail = self.reason
        if not detail and self.failed_pages:
            detail = f"{self.failed_pages} page{'s' if self.failed_pages != 1 else ''} failed"
        return f"{resource} {self.status}" + (f": {detail}" if detail else "")


@dataclass(frozen=True)
class Scope:
    """The verdict's scope for one check: evaluate (with coverage) or not, and why."""

    evaluate: bool
    reason: str | None = None
    coverage: str | None = None
    # Resources the check reads whose records are not all covered tonight (the lifecycle
    # resolves nothing there), of which `read_partial` are covered over the records read.
    partial: tuple[str, ...] = ()
    read_partial: tuple[str, ...] = ()
    # Per-resource checks: resources left out tonight (hidden from the check's SQL).
    excluded: tuple[str, ...] = ()


@dataclass
class _Presence:
    records: int
    present: int
    json_path: str


@dataclass
class _Gaps:
    ranges: list[tuple[int, int]] = field(default_factory=list)
    other: int = 0


def read_scans(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    *,
    skip_param: str = "skip",
    page_size_param: str = "max-records",
) -> dict[str, Scan]:
    """This run's `resource_scans`, with what could not be read from `failed_calls`."""
    gaps: dict[str, _Gaps] = defaultdict(_Gaps)
    for resource, query in con.execute(
        # A 404 is an answer (a list not offered, an id not found: the scan's reason says
        # so), not a page that could not be read.
        "SELECT resource, query FROM failed_calls "
        "WHERE run_id = ? AND resource IS NOT NULL AND http_status IS DISTINCT FROM 404",
        [run_id],
    ).fetchall():
        args = parse_qs(query or "")
        skip = _integer(args.get(skip_param))
        if skip is None:
            gaps[resource].other += 1
            continue
        size = _integer(args.get(page_size_param)) or 1
        gaps[resource].ranges.append((skip, skip + max(size, 1) - 1))
    rows = con.execute(
        "SELECT resource, status, reason, failed_pages, records FROM resource_scans "
        "WHERE run_id = ?",
        [run_id],
    ).fetchall()
    return {
        r[0]: Scan(
            status=r[1],
            reason=r[2],
            failed_pages=int(r[3] or 0),
            records=int(r[4] or 0),
            gaps=_describe_gaps(gaps[r[0]]) if r[0] in gaps else None,
        )
        for r in rows
    }


def read_presence(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[tuple[str, str], _Presence]:
    """This run's `field_presence`: (resource, field) -> records, present, json path."""
    rows = con.execute(
        "SELECT resource, field, records, present, json_path FROM field_presence WHERE run_id = ?",
        [run_id],
    ).fetchall()
    return {(r[0], r[1]): _Presence(int(r[2]), int(r[3]), r[4]) for r in rows}


def plan_scope(
    check: CheckDefinition,
    scans: Mapping[str, Scan],
    presence: Mapping[tuple[str, str], _Presence],
    fields: Mapping[str, Mapping[str, str]] | None = None,
) -> Scope:
    """Decide what `check` covers tonight (see the module docstring)."""
    absent = _absent_fields(check, presence, fields or DEFAULT_FIELDS)
    blocked: list[str] = []
    partial: list[str] = []
    for resource in check.requires:
        scan = scans.get(resource)
        if scan is None:
            blocked.append(f"{resource} not scanned in this run")
        elif scan.complete:
            continue
        elif resource in check.tolerates and scan.records > 0:
            partial.append(resource)
        elif resource in check.tolerates:
            blocked.append(f"{scan.describe(resource)}; no record read")
        else:
            blocked.append(scan.describe(resource))
    if blocked:
        return Scope(evaluate=False, reason="; ".join(blocked))
    missing = [full for resource, _, full in absent if resource in check.requires]
    if missing:
        return Scope(evaluate=False, reason="; ".join(missing))
    parts = [_covered(r, scans[r]) for r in check.requires]
    excluded: list[str] = []
    left_out: list[str] = []
    covered = 0
    field_notes = {resource: (short, full) for resource, short, full in reversed(absent)}
    for resource in check.per_resource:
        if resource in check.requires:
            continue
        scan = scans.get(resource)
        note = field_notes.get(resource)
        usable = scan is not None and (
            scan.complete or (resource in check.tolerates and scan.records > 0)
        )
        if note is None and scan is not None and usable:
            covered += 1
            parts.append(_covered(resource, scan))
            if not scan.complete:
                partial.append(resource)
            continue
        if note is not None:
            short, full = note
        elif scan is None:
            short, full = "not scanned in this run", f"{resource} not scanned in this run"
        else:
            full = scan.describe(resource)
            short = full.removeprefix(f"{resource} ")
        excluded.append(resource)
        left_out.append(full)
        parts.append(f"{resource} not evaluated ({short})")
    if check.per_resource and not covered and not check.requires:
        return Scope(evaluate=False, reason="no resource complete: " + "; ".join(left_out))
    if not check.resources:
        coverage = f"the {len(scans)} resource scans of this run"
    else:
        coverage = "; ".join(parts)
    return Scope(
        evaluate=True,
        coverage=coverage,
        partial=tuple(partial) + tuple(excluded),
        read_partial=tuple(partial),
        excluded=tuple(excluded),
    )


def _absent_fields(
    check: CheckDefinition,
    presence: Mapping[tuple[str, str], _Presence],
    fields: Mapping[str, Mapping[str, str]],
) -> list[tuple[str, str, str]]:
    """(resource, short, full reason) for each required mapped field no record had tonight.

    No row for it (a warehouse or run from before field presence was counted) means unknown,
    which is not absent.
    """
    out = []
    for resource, name in check.requires_fields:
        seen = presence.get((resource, name))
        if seen is None or seen.records == 0 or seen.present > 0:
            continue
        label = fields.get(resource, {}).get(name) or DEFAULT_FIELDS[resource][name]
        short = f"field {label} not present"
        full = f"{short} in any of {seen.records:,} {resource} (setting [fields.{resource}] {name})"
        out.append((resource, short, full))
    return out


def _covered(resource: str, scan: Scan) -> str:
    noun = _noun(resource, scan.records)
    if scan.complete:
        return f"all {scan.records:,} {noun}"
    notes = ["the list is not offered"] if scan.status == "unavailable" else []
    notes += [scan.gaps] if scan.gaps else []
    return f"{scan.records:,} {noun} read ({'; '.join(notes or [scan.status])})"


def _noun(resource: str, count: int) -> str:
    return resource[:-1] if count == 1 and resource.endswith("s") else resource


def _integer(values: Sequence[str] | None) -> int | None:
    if not values:
        return None
    try:
        return int(values[0])
    except ValueError:
        return None


def _describe_gaps(gaps: _Gaps) -> str:
    texts = []
    if gaps.ranges:
        merged: list[list[int]] = []
        for start, end in sorted(gaps.ranges):
            if merged and start <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        shown = [f"{a:,}-{b:,}" if a != b else f"{a:,}" for a, b in merged[:_SHOWN_RANGES]]
        more = len(merged) - len(shown)
        if more:
            listed = ", ".join(shown) + f" and {more} more range{'s' if more != 1 else ''}"
        elif len(shown) > 1:
            listed = ", ".join(shown[:-1]) + " and " + shown[-1]
        else:
            listed = shown[0]
        word = "offsets" if len(merged) > 1 or merged[0][0] != merged[0][1] else "offset"
        texts.append(f"{word} {listed} could not be read")
    if gaps.other:
        texts.append(f"{gaps.other} request{'s' if gaps.other != 1 else ''} failed")
    return "; ".join(texts)
