"""`recon findings verify`: is the audit trail's hash chain intact?

Each line carries `prev`, the SHA-256 of the line before it (recon.findings.acks). A line
edited, removed or moved breaks the chain at the next line; `verify_trail` names the first
such line, and, given the (line, hash) pairs a warehouse copied at its last load, also
lines cut off the end or edited before it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from recon.findings.acks import GENESIS, line_hash, split_lines

__all__ = ["TrailReport", "verify_trail"]


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


def verify_trail(path: Path, recorded: Mapping[int, str] | None = None) -> TrailReport:
    """Check the chain of the trail at `path`; `recorded` (seq -> line hash, the copy a
    warehouse took) also catches lines cut off its end or edited before a publish."""
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
    for seq, digest in sorted((recorded or {}).items()):
        if seq > len(lines):
            return broken(
                seq,
                f"line {seq} is missing: the warehouse's copy holds it, the trail ends at "
                f"line {len(lines)} (lines removed from its end)",
            )
        if hashes[seq - 1] != digest:
            return broken(seq, f"line {seq} differs from the copy the warehouse took (edited)")
    return TrailReport(len(lines), None, None, tuple(notes))
