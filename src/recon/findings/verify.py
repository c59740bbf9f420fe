"""`recon findings verify`: is the audit trail what recon wrote?

Each line carries `prev`, the SHA-256 of the line before it (recon.findings.acks). A line
edited, removed or moved breaks the chain at the next line; `verify_trail` names the first
such line. The chain alone cannot catch the newest line edited, lines cut off the end, or
every line re-chained, so the file is also checked against what was written down outside
it (`Evidence`, gathered by `gather_evidence`):

- the warehouse's record (`finding_acks`), which every action updates as it writes its
  line: a line that differs from it, or that it lacks (from `trail_record.since_seq` on),
  was not written by recon;
- every chain head written down: each report's summary.json (`audit_trail`) and each close
  pack (close.html's `recon-trail-head`): line N must still hash to what was recorded;
- with `RECON_TRAIL_KEY`, each line's `seal` (HMAC-SHA256 under that key).

docs/audit-trail.md says what that catches and what it cannot.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from recon.errors import WarehouseError
from recon.findings.chain import GENESIS, line_hash, seal_of, split_lines, trail_key

__all__ = [
    "Evidence",
    "Head",
    "TrailDisagrees",
    "TrailReport",
    "check_before_copy",
    "gather_evidence",
    "verify_trail",
]

HEAD_META = re.compile(
    r'<meta name="recon-trail-head" content="(\d+) ([0-9a-f]{64})"', re.IGNORECASE
)


class TrailDisagrees(WarehouseError):
    """The audit trail disagrees with its record: a night refuses to copy it."""


@dataclass(frozen=True)
class Head:
    """A chain head written down somewhere: line `lines` hashed to `head`."""

    source: str
    lines: int
    head: str


@dataclass(frozen=True)
class Evidence:
    """What was written down outside the trail file."""

    recorded: Mapping[int, str] = field(default_factory=dict)  # the warehouse: seq -> hash
    since: int | None = None  # from this line on, the warehouse records every line
    heads: Sequence[Head] = ()


@dataclass(frozen=True)
class TrailReport:
    """What `verify_trail` found: intact or the first broken line, and what it noticed."""

    lines: int
    broken_line: int | None  # the first line that was edited, removed or moved (1-based)
    problem: str | None
    notes: tuple[str, ...] = ()

    @property
    def intact(self) -> bool:
        return self.broken_line is None


def verify_trail(
    path: Path,
    recorded: Mapping[int, str] | None = None,
    *,
    evidence: Evidence | None = None,
    key: bytes | None = None,
) -> TrailReport:
    """Check the chain of the trail at `path`; `recorded` (seq -> line hash, the warehouse's
    record) or `evidence` (that, where it begins, and the heads written down) also catch
    lines edited at the end, cut off it, added to it or re-chained; `key` checks seals."""
    if evidence is None:
        evidence = Evidence(recorded=dict(recorded or {}))
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raw = b""
    lines = split_lines(raw)
    hashes = [line_hash(x) for x in lines]
    notes: list[str] = []
    parsed: list[dict[str, Any] | None] = []
    for line in lines:
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError:
            data = None
        parsed.append(data if isinstance(data, dict) else None)

    def broken(n: int, why: str) -> TrailReport:
        return TrailReport(len(lines), n, why, tuple(notes))

    first = next((i for i, d in enumerate(parsed) if d is not None and "prev" in d), None)
    if first is None and lines:
        notes.append(f"none of its {len(lines)} line(s) is chained (written before chaining)")
    if first is not None:
        expected = (
            GENESIS
            if first == 0
            else hashlib.sha256(b"".join(x + b"\n" for x in lines[:first])).hexdigest()
        )
        if parsed[first]["prev"] != expected:  # type: ignore[index]
            if first == 0:
                return broken(1, "line 1 does not start the trail: a line before it was removed")
            return broken(first, f"lines 1-{first} (before the chain began) were edited or removed")
        if first:
            notes.append(
                f"lines 1-{first} were written before chaining; line {first + 1} seals them"
            )
        by_hash = {h: i for i, h in enumerate(hashes)}
        for i in range(first + 1, len(lines)):
            data = parsed[i]
            if data is None:
                if i == len(lines) - 1:
                    notes.append(f"line {i + 1} is incomplete (a write cut short)")
                else:
                    notes.append(
                        f"line {i + 1} is a write cut short by a crash (kept in the chain)"
                    )
                continue
            if data.get("prev") == hashes[i - 1]:
                continue
            n = i + 1
            where = by_hash.get(str(data.get("prev")))
            if "prev" not in data:
                return broken(n, f"line {n} carries no hash of the line before it (edited)")
            if where is not None and where > i - 1:
                return broken(n, f"lines reordered: line {n} was written after line {where + 1}")
            if where is not None and where < i - 1:
                return broken(
                    where + 2,
                    f"lines {where + 2}-{i} were inserted or moved: "
                    f"line {n} follows line {where + 1}",
                )
            return broken(
                i, f"line {i} was edited or a line after it removed (line {n} does not follow it)"
            )
    if key is not None:
        sealed_from: int | None = None
        for i, line in enumerate(lines):
            if parsed[i] is None:
                continue
            ok = seal_of(line, key)
            if ok is False:
                return broken(
                    i + 1,
                    f"line {i + 1}'s seal does not match (edited, or sealed with another key)",
                )
            if ok is None and sealed_from is not None:
                return broken(
                    i + 1,
                    f"line {i + 1} carries no seal though line "
                    f"{sealed_from} does (written without RECON_TRAIL_KEY)",
                )
            if ok and sealed_from is None:
                sealed_from = i + 1
        if sealed_from is None and lines:
            notes.append("no line is sealed (RECON_TRAIL_KEY was not set when they were written)")
        elif sealed_from and sealed_from > 1:
            notes.append(f"lines 1-{sealed_from - 1} were written before RECON_TRAIL_KEY was set")
    recorded = evidence.recorded
    for seq, digest in sorted(recorded.items()):
        if seq > len(lines):
            return broken(
                seq,
                f"line {seq} is missing: the warehouse's copy holds it, the trail ends at "
                f"line {len(lines)} (lines removed from its end)",
            )
        if hashes[seq - 1] != digest:
            return broken(seq, f"line {seq} differs from the copy the warehouse took (edited)")
    if evidence.since is not None:
        for seq in range(max(evidence.since, 1), len(lines) + 1):
            if seq not in recorded and parsed[seq - 1] is not None:
                return broken(
                    seq,
                    f"line {seq} is not in the warehouse's record of the trail: it was not "
                    "written by recon (or a write was cut short before it was recorded)",
                )
    for h in evidence.heads:
        if h.lines > len(lines):
            return broken(
                h.lines,
                f"line {h.lines} is missing: {h.source} records the trail's head there, "
                f"the trail ends at line {len(lines)}",
            )
        if hashes[h.lines - 1] != h.head:
            return broken(
                h.lines,
                f"line {h.lines} differs from the head {h.source} recorded "
                "(edited, or the trail re-chained)",
            )
    return TrailReport(len(lines), None, None, tuple(notes))


def _recorded(warehouse: Path) -> tuple[dict[int, str], int | None]:
    """The warehouse's record of the trail: (seq -> line hash, since which line it holds
    every line as written)."""
    import duckdb

    from recon.errors import ReconError
    from recon.warehouse.database import open_readonly

    if not warehouse.exists():
        return {}, None
    con = open_readonly(warehouse)
    try:
        rows = con.execute(
            "SELECT seq, line_hash FROM finding_acks WHERE line_hash IS NOT NULL"
        ).fetchall()
        try:
            since_row = con.execute("SELECT min(since_seq) FROM trail_record").fetchone()
        except duckdb.Error:  # a warehouse from before lines were recorded as written
            since_row = None
    except (duckdb.Error, ReconError):
        return {}, None
    finally:
        con.close()
    since = int(since_row[0]) if since_row and since_row[0] is not None else None
    return {int(seq): str(digest) for seq, digest in rows}, since


def _heads(reports: Path | None) -> list[Head]:
    """Every chain head the reports and close packs under `reports` wrote down."""
    if reports is None or not reports.is_dir():
        return []
    heads: list[Head] = []
    for summary in sorted(reports.glob("*/summary.json")):
        try:
            trail = orjson.loads(summary.read_bytes()).get("audit_trail")
        except (OSError, orjson.JSONDecodeError, AttributeError):
            continue
        if isinstance(trail, dict) and trail.get("lines") and trail.get("head"):
            source = f"{summary.parent.name}/summary.json"
            heads.append(Head(source, int(trail["lines"]), str(trail["head"])))
    for html in sorted(reports.glob("close-*/close.html")):
        try:
            m = HEAD_META.search(html.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if m:
            heads.append(Head(f"{html.parent.name}/close.html", int(m.group(1)), m.group(2)))
    return heads


def gather_evidence(warehouse: Path, reports: Path | None) -> Evidence:
    """What the warehouse and the reports under `reports` wrote down about the trail."""
    recorded, since = _recorded(warehouse)
    return Evidence(recorded, since, tuple(_heads(reports)))


def check_before_copy(warehouse: Path, trail: Path, reports: Path | None) -> None:
    """Refuse (TrailDisagrees, one line) a trail that disagrees with its record: what a
    night runs before it copies the trail into the warehouse."""
    report = verify_trail(trail, evidence=gather_evidence(warehouse, reports), key=trail_key())
    if not report.intact:
        raise TrailDisagrees(
            f"the audit trail {trail} disagrees with its record ({report.problem}); it was "
            "not copied: run `recon findings verify` and restore the trail"
        )
