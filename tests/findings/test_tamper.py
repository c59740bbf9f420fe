"""Tamper evidence that holds (issue 39): every line is recorded in the warehouse as it is
written, chain heads are written down in reports and close packs, and `recon findings
verify` checks the file against all of them (and against seals, with RECON_TRAIL_KEY)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import orjson
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.findings.acks import GENESIS, acks_path, line_hash
from recon.findings.trail_table import load_acks

from .conftest import KEY_A, KEY_B, KEY_C


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["findings", *args])
    return result.exit_code, result.stdout, result.stderr


def _acked(db: Path) -> Path:
    for key, note in ((KEY_A, "NOTE-A1"), (KEY_B, "NOTE-B1"), (KEY_C, "NOTE-C1")):
        assert _run("ack", key, "--note", note, "--db", str(db))[0] == 0
    return acks_path(db)


def _rechain(lines: list[bytes], change: bytes, to: bytes, *, seal: bool = False) -> list[bytes]:
    """Every line rewritten (`change` -> `to`) and its `prev` recomputed: a chain that holds
    (`seal`: with a seal made up by someone without the key)."""
    out: list[bytes] = []
    prev = GENESIS
    for line in lines:
        data = orjson.loads(line.replace(change, to))
        data.pop("seal", None)
        data["prev"] = prev
        new = orjson.dumps(data)
        if seal:
            new = new[:-1] + b',"seal":"' + hashlib.sha256(new).hexdigest().encode() + b'"}'
        prev = line_hash(new)
        out.append(new)
    return out


def _write(log: Path, lines: list[bytes]) -> None:
    log.write_bytes(b"".join(x + b"\n" for x in lines))


def test_an_action_is_recorded_in_the_warehouse_and_shows_in_findings_current_at_once(
    db: Path,
) -> None:
    from recon.warehouse.published import create_views

    con = duckdb.connect(str(db))
    create_views(con)  # the analysts' views, as a publish makes them
    con.close()
    log = _acked(db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT seq, note, line_hash FROM finding_acks ORDER BY seq").fetchall()
        state = con.execute(
            "SELECT work_state, work_note FROM findings_current WHERE finding_key = ?", [KEY_A]
        ).fetchone()
    finally:
        con.close()
    lines = log.read_bytes().splitlines()
    notes = ("NOTE-A1", "NOTE-B1", "NOTE-C1")
    assert rows == [(i + 1, notes[i], line_hash(x)) for i, x in enumerate(lines)]
    assert state == ("acknowledged", "NOTE-A1")


def test_the_newest_line_edited_is_caught(db: Path) -> None:
    log = _acked(db)
    log.write_bytes(log.read_bytes().replace(b"NOTE-C1", b"NOTE-C2"))
    code, _, err = _run("verify", "--db", str(db))
    assert code == 1
    assert "line 3 differs from the copy the warehouse took (edited)" in err


def test_a_rechained_forgery_is_caught(db: Path) -> None:
    log = _acked(db)
    lines = log.read_bytes().splitlines()
    who = orjson.loads(lines[0])["who"].encode()
    _write(log, _rechain(lines, b'"who":"' + who + b'"', b'"who":"someone-else"'))
    code, _, err = _run("verify", "--db", str(db))
    assert code == 1
    assert "line 1 differs from the copy the warehouse took (edited)" in err


def test_a_line_added_at_the_end_with_a_good_chain_is_caught(db: Path) -> None:
    log = _acked(db)
    lines = log.read_bytes().splitlines()
    forged = orjson.loads(lines[-1])
    forged.update(finding_key=KEY_C, note="forged", prev=line_hash(lines[-1]))
    _write(log, [*lines, orjson.dumps(forged)])
    code, _, err = _run("verify", "--db", str(db))
    assert code == 1
    assert "line 4 is not in the warehouse's record of the trail" in err


def test_a_forgery_of_trail_and_warehouse_alike_is_caught_by_the_head_a_report_wrote(
    db: Path, tmp_path: Path
) -> None:
    log = _acked(db)
    lines = log.read_bytes().splitlines()
    report = tmp_path / "reports" / "20261125T020000Z-000001"
    report.mkdir(parents=True)
    head = {"lines": len(lines), "head": line_hash(lines[-1])}
    (report / "summary.json").write_bytes(orjson.dumps({"audit_trail": head}))
    assert _run("verify", "--db", str(db), "--reports", str(tmp_path / "reports"))[0] == 0
    _write(log, _rechain(lines, b"NOTE-A1", b"NOTE-XX"))
    con = duckdb.connect(str(db))
    load_acks(con, log)  # the forger rewrites the warehouse's record too
    con.close()
    code, _, err = _run("verify", "--db", str(db), "--reports", str(tmp_path / "reports"))
    assert code == 1
    assert (
        "line 3 differs from the head 20261125T020000Z-000001/summary.json recorded "
        "(edited, or the trail re-chained)"
    ) in err


def test_with_a_trail_key_every_line_is_sealed_and_a_forgery_without_the_key_is_caught(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_TRAIL_KEY", "kept-from-the-analysts")
    log = _acked(db)
    lines = log.read_bytes().splitlines()
    assert all(b'"seal":"' in x for x in lines)
    assert _run("verify", "--db", str(db))[0] == 0
    _write(log, _rechain(lines, b"NOTE-B1", b"NOTE-B9", seal=True))
    con = duckdb.connect(str(db))
    load_acks(con, log)  # warehouse rewritten too: only the key tells
    con.close()
    code, _, err = _run("verify", "--db", str(db))
    assert code == 1
    assert "line 1's seal does not match" in err


def test_who_is_recon_user_else_the_os_user_marked_as_such(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import getpass

    assert _run("ack", KEY_A, "--note", "n1", "--db", str(db))[0] == 0
    monkeypatch.setenv("RECON_USER", "ann.k")
    assert _run("ack", KEY_B, "--note", "n2", "--db", str(db))[0] == 0
    lines = [orjson.loads(x) for x in acks_path(db).read_bytes().splitlines()]
    assert [x["who"] for x in lines] == [f"os:{getpass.getuser()}", "ann.k"]


def test_the_alert_carries_the_trail_head() -> None:
    from recon.night.notify import Alert

    head = {"lines": 12, "head": "ab" * 32}
    text = Alert("20261129T020000Z-000001", "complete", 0, trail_head=head).text()
    assert f"audit trail: 12 line(s), head {'ab' * 32}" in text
