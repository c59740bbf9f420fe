"""The audit trail is tamper-evident: each line carries the SHA-256 of the one before it,
and `recon findings verify` names the first line edited, removed or reordered."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.findings.acks import GENESIS, AckLog, acks_path, line_hash
from recon.findings.trail_table import load_acks
from recon.findings.verify import verify_trail
from tests.ledger.support import warehouse

from .conftest import KEY_A, KEY_B, KEY_C, KEY_D


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["findings", *args])
    return result.exit_code, result.stdout, result.stderr


def _trail(db: Path) -> Path:
    for key in (KEY_A, KEY_B, KEY_C):
        assert _run("ack", key, "--note", f"why {key}", "--db", str(db))[0] == 0
    assert _run("assign", KEY_B, "--to", "ann", "--db", str(db))[0] == 0
    AckLog(acks_path(db)).append(
        "match", [("ORD-9", None)], note="by hand", fields={"payments": ["p1"]}
    )
    return acks_path(db)


def test_every_line_carries_the_hash_of_the_one_before_whatever_its_action(db: Path) -> None:
    log = _trail(db)
    lines = log.read_bytes().splitlines()
    assert len(lines) == 5
    assert orjson.loads(lines[0])["prev"] == GENESIS
    for before, line in itertools.pairwise(lines):
        assert orjson.loads(line)["prev"] == hashlib.sha256(before).hexdigest()
    assert orjson.loads(lines[-1])["action"] == "match"  # another writer's action, chained
    code, out, _ = _run("verify", "--db", str(db))
    assert (code, out.strip()) == (0, f"audit trail intact: 5 line(s) in {log}")


def test_readers_ignore_actions_they_do_not_know(db: Path) -> None:
    _trail(db)
    code, out, _ = _run("list", "--db", str(db))
    assert code == 0
    assert "ORD-9" not in out
    states = {line.split()[1]: line.split()[0] for line in out.splitlines()[1:]}
    assert states[KEY_B] == "investigating"


def _tampered(db: Path, change: str) -> tuple[int, str]:
    log = _trail(db)
    lines = log.read_bytes().splitlines()
    if change == "edit":
        lines[1] = lines[1].replace(b"why", b"WHY")
    elif change == "remove":
        del lines[2]
    elif change == "reorder":
        lines[1], lines[2] = lines[2], lines[1]
    elif change == "remove_first":
        del lines[0]
    log.write_bytes(b"".join(x + b"\n" for x in lines))
    code, _, err = _run("verify", "--db", str(db))
    return code, err.strip()


def test_an_edited_line_is_named(db: Path) -> None:
    code, err = _tampered(db, "edit")
    assert code == 1
    assert "line 2 was edited or a line after it removed (line 3 does not follow it)" in err


def test_a_removed_line_is_named(db: Path) -> None:
    code, err = _tampered(db, "remove")
    assert code == 1
    assert "line 2 was edited or a line after it removed" in err


def test_reordered_lines_are_named(db: Path) -> None:
    code, err = _tampered(db, "reorder")
    assert code == 1
    assert "lines reordered: line 2 was written after line 3" in err


def test_a_removed_first_line_is_named(db: Path) -> None:
    code, err = _tampered(db, "remove_first")
    assert code == 1
    assert "line 1 does not start the trail" in err


def test_lines_cut_off_the_end_are_caught_by_the_warehouse_copy(db: Path) -> None:
    log = _trail(db)
    con = warehouse(db)
    assert load_acks(con, log) == 5  # what a night's load does
    assert con.execute(
        "SELECT count(*) FROM finding_acks WHERE line_hash IS NOT NULL"
    ).fetchone() == (5,)
    con.close()
    log.write_bytes(b"".join(x + b"\n" for x in log.read_bytes().splitlines()[:3]))
    code, _, err = _run("verify", "--db", str(db))
    assert code == 1
    assert "line 4 is missing: the warehouse's copy holds it, the trail ends at line 3" in err


def test_a_write_cut_by_a_crash_stays_in_the_chain(db: Path) -> None:
    log = acks_path(db)
    _run("ack", KEY_A, "--note", "kept", "--db", str(db))
    with log.open("ab") as fh:
        fh.write(b'{"action": "ack", "finding_key": "ledger_')  # a write cut by kill -9
    _run("ack", KEY_B, "--note", "after the crash", "--db", str(db))
    lines = log.read_bytes().splitlines()
    assert orjson.loads(lines[2])["prev"] == line_hash(lines[1])
    report = verify_trail(log)
    assert report.intact
    assert report.notes == ("line 2 is a write cut short by a crash (kept in the chain)",)


def test_a_trail_from_before_chaining_is_sealed_by_its_first_chained_line(db: Path) -> None:
    log = acks_path(db)
    old = (
        b'{"action":"ack","finding_key":"k","who":"u","at":"2026-11-01T00:00:00Z",'
        b'"note":"n","until":null,"amounts":null}\n'
    )
    log.write_bytes(old * 2)
    _run("ack", KEY_A, "--note", "new", "--db", str(db))
    assert (
        orjson.loads(log.read_bytes().splitlines()[2])["prev"]
        == hashlib.sha256(old * 2).hexdigest()
    )
    assert verify_trail(log).intact
    log.write_bytes(old.replace(b'"n"', b'"m"') + log.read_bytes()[len(old) :])
    report = verify_trail(log)
    assert (report.broken_line, report.problem) == (
        2,
        "lines 1-2 (before the chain began) were edited or removed",
    )


def test_lines_of_other_writers_are_chained_too(db: Path) -> None:
    log = AckLog(acks_path(db))
    _run("ack", KEY_A, "--note", "first", "--db", str(db))
    written = log.record("match", {"order": "ORD-7", "payments": ["pay_1"]}, note="by hand")
    log.record("accept_books", {"input": "orders"}, note="short file, known")
    _run("assign", KEY_B, "--to", "ann", "--db", str(db))
    lines = log.path.read_bytes().splitlines()
    assert [orjson.loads(x)["prev"] for x in lines[1:]] == [line_hash(x) for x in lines[:-1]]
    got = log.records(["match"])
    assert [(r["order"], r["payments"], r["note"]) for r in got] == [
        ("ORD-7", ["pay_1"], "by hand")
    ]
    assert "prev" not in got[0]
    assert written["action"] == "match"
    assert verify_trail(log.path).intact
    assert _states(db) == {
        KEY_A: "acknowledged",
        KEY_B: "investigating",
        KEY_C: "open",
        KEY_D: "open",
    }


def _states(db: Path) -> dict[str, str]:
    _, out, _ = _run("list", "--db", str(db))
    return {line.split()[1]: line.split()[0] for line in out.splitlines()[1:]}


def test_an_unknown_action_in_a_stream_writes_nothing(tmp_path: Path) -> None:
    from recon.findings.acks import NewEvent

    trail = AckLog(tmp_path / "recon.acks.jsonl", None)
    events = (NewEvent(a, KEY_A, None, note="n") for a in ("ack", "Shelve it"))
    with pytest.raises(ValueError, match="unknown action 'Shelve it'"):
        trail.append_events(events)
    assert not trail.path.exists() or trail.path.read_bytes() == b""
    assert trail.append_events([NewEvent("ack", KEY_A, None, note="n")]) == 1
    assert [e.action for e in trail.read()] == ["ack"]
