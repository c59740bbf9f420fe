"""The trail's chain head (`AckLog.head`, written down in close packs): its last line read from
the end of the file, its lines counted exactly, so that `recon findings verify` finds line
`lines` hashing to `head` — for any shape of file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from recon.findings import chain
from recon.findings.acks import AckLog
from recon.findings.chain import line_hash, split_lines
from recon.findings.verify import Evidence, Head, verify_trail


def _whole(raw: bytes) -> dict[str, Any] | None:
    """The head as the trail read whole says it: every line split, the last one hashed."""
    lines = split_lines(raw)
    return {"lines": len(lines), "head": line_hash(lines[-1])} if lines else None


def _line(n: int, pad: int = 0) -> bytes:
    return orjson.dumps({"action": "ack", "finding_key": f"k{n}", "note": "x" * pad})


LONG = chain.BACK_BLOCK * 3 + 17  # a line that takes several blocks read backwards

SHAPES = {
    "empty": b"",
    "one line": _line(1) + b"\n",
    "one line, no newline": _line(1),
    "many lines": b"".join(_line(n) + b"\n" for n in range(5000)),
    "many lines, the last cut": b"".join(_line(n) + b"\n" for n in range(5000)) + b'{"act',
    "a last line longer than the block": _line(1) + b"\n" + _line(2, LONG) + b"\n",
    "only a line longer than the block": _line(2, LONG) + b"\n",
    "a long line before a short one": _line(1, LONG) + b"\n" + _line(2) + b"\n",
    "a long cut line": _line(1) + b"\n" + _line(2, LONG)[:-5],
    "a blank last line": _line(1) + b"\n\n",
    "only a newline": b"\n",
}


@pytest.mark.parametrize("raw", list(SHAPES.values()), ids=list(SHAPES))
def test_the_head_is_the_last_line_and_the_exact_count(tmp_path: Path, raw: bytes) -> None:
    trail = tmp_path / "acks.jsonl"
    trail.write_bytes(raw)
    head = AckLog(trail, None).head()
    assert head == _whole(raw)


def test_no_trail_has_no_head(tmp_path: Path) -> None:
    assert AckLog(tmp_path / "none.jsonl", None).head() is None


def test_verify_accepts_the_head_of_a_chained_trail_and_names_a_line_cut_off_after_it(
    tmp_path: Path,
) -> None:
    trail = tmp_path / "acks.jsonl"
    log = AckLog(trail, None)
    log.append("ack", [(f"k{n}", None) for n in range(3)], note="x" * LONG)
    head = log.head()
    assert head is not None
    assert head["lines"] == 3
    written = Evidence(heads=[Head("close.html", head["lines"], head["head"])])
    assert verify_trail(trail, evidence=written).intact
    raw = trail.read_bytes()
    trail.write_bytes(b"".join(x + b"\n" for x in split_lines(raw)[:-1]))
    assert verify_trail(trail, evidence=written).broken_line == 3
