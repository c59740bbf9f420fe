"""How one append learns where the trail stands: its line count from the warehouse's record
(never by reading a long trail whole) when the record vouches for the file's last line, by
counting otherwise; and its input read to its end before the warehouse is opened to record
the lines (one spool), so a stream that reads the warehouse itself can feed it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.findings import acks
from recon.findings.acks import AckLog, NewEvent, acks_path

from .conftest import KEY_A, KEY_B, KEY_C, KEY_D


def _recorded(db: Path) -> list[tuple[int, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT seq, action FROM finding_acks ORDER BY seq").fetchall()
    finally:
        con.close()
    return [(int(r[0]), str(r[1])) for r in rows]


def _verify(db: Path) -> None:
    result = CliRunner().invoke(app, ["findings", "verify", "--db", str(db)])
    assert result.exit_code == 0, result.stdout + result.stderr


def test_an_append_numbers_its_lines_from_the_record_without_reading_the_trail(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trail = AckLog(acks_path(db))
    trail.append("ack", [(k, None) for k in (KEY_A, KEY_B, KEY_C)], note="first")

    def whole(fd: int, size: int) -> int:
        raise AssertionError("the trail was read whole to count its lines")

    monkeypatch.setattr(acks, "count_lines", whole)
    trail.append("assign", [(KEY_D, None)], note=None, owner="ann")
    trail.record("comment", {"finding_key": KEY_A}, note="a word")
    assert _recorded(db) == [(1, "ack"), (2, "ack"), (3, "ack"), (4, "assign"), (5, "comment")]
    _verify(db)


def test_lines_the_record_lacks_are_counted_from_the_file(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trail = AckLog(acks_path(db))
    trail.append("ack", [(KEY_A, None)], note="recorded")
    # Two lines written while no warehouse was there to record them (a fresh checkout):
    AckLog(acks_path(db), None).append("ack", [(KEY_B, None), (KEY_C, None)], note="unrecorded")
    counted: list[int] = []
    real = acks.count_lines

    def counting(fd: int, size: int) -> int:
        counted.append(real(fd, size))
        return counted[-1]

    monkeypatch.setattr(acks, "count_lines", counting)
    trail.append("ack", [(KEY_D, None)], note="after")
    assert counted == [3]  # the record's last line is not the file's: counted
    assert _recorded(db)[0] == (1, "ack")
    assert _recorded(db)[-1] == (4, "ack")  # the fourth line of the file, numbered so


def test_a_stream_that_reads_the_warehouse_is_read_to_its_end_before_recording(
    db: Path,
) -> None:
    """The input of a bulk action by filter reads the published warehouse read-only while
    it yields; DuckDB lets one process hold a file either read-only or read-write, so the
    lines are spooled before the record opens the file."""

    def from_the_warehouse() -> Iterator[NewEvent]:
        con = duckdb.connect(str(db), read_only=True)
        try:
            keys = con.execute("SELECT finding_key FROM findings ORDER BY 1").fetchall()
            for (key,) in keys:
                yield NewEvent("ack", str(key), None, note="bulk")
        finally:
            con.close()

    written = AckLog(acks_path(db)).append_events(from_the_warehouse())
    assert written == 4
    assert [seq for seq, _ in _recorded(db)] == [1, 2, 3, 4]
    _verify(db)
