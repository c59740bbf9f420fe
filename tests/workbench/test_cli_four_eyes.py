"""The command line through the workbench's one service: with users (`recon users`), the CLI
user (RECON_USER) acts with their role, and a write-off, a manual match or a worklist's
write-off becomes a proposal an approver decides, exactly as in the browser; a viewer is
refused with one line (exit 2); nobody approves their own proposal."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import openpyxl
import orjson
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.findings.acks import acks_path
from recon.workbench.users import UserStore, users_path
from tests.workbench.support import (
    KEY_BIG,
    KEY_SHORT,
    KEY_SMALL,
    KEY_SUGGEST,
    KEY_XSS,
    PASSWORD,
    USERS,
    build_warehouse,
)


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "data" / "recon.duckdb"
    build_warehouse(path)
    store = UserStore(users_path(path))
    for name, role in USERS.items():
        store.add(name, role, PASSWORD)
    return path


def _recon(user: str | None, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"RECON_USER": user} if user else None)
    return result.exit_code, result.stdout, result.stderr


def _lines(db: Path) -> list[dict[str, object]]:
    path = acks_path(db)
    return [orjson.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []


def _state(db: Path, key: str) -> str:
    code, out, err = _recon(None, "findings", "list", "--db", str(db), "--format", "json")
    assert code == 0, err
    return next(str(f["work_state"]) for f in orjson.loads(out) if f["finding_key"] == key)


def _verified(db: Path) -> None:
    code, out, err = _recon(None, "findings", "verify", "--db", str(db))
    assert code == 0, out + err


def test_a_preparers_cli_write_off_becomes_a_proposal(db: Path) -> None:
    code, out, err = _recon(
        "alice", "findings", "resolve", KEY_XSS, "--reason", "written_off",
        "--note", "not worth chasing", "--db", str(db),
    )  # fmt: skip
    assert code == 0, err
    assert "resolved 0 finding(s) manually (written_off)" in out
    assert "proposed 1 resolution(s) for an approver" in out
    [line] = _lines(db)
    assert (line["action"], line["who"], line["finding_key"]) == ("propose", "alice", KEY_XSS)
    assert (line["kind"], line["reason"]) == ("resolve", "written_off")
    assert _state(db, KEY_XSS) != "resolved_manually"
    again = _recon(
        "alice", "findings", "resolve", KEY_XSS, "--reason", "written_off",
        "--note", "not worth chasing", "--db", str(db),
    )  # fmt: skip
    assert again[0] == 0
    assert f"{KEY_XSS}: already proposed ({line['proposal']})" in again[1]
    assert len(_lines(db)) == 1  # not proposed twice
    # not a write-off, below any threshold: applied at once, the user (not os:…) as who
    code, _, err = _recon(
        "alice", "findings", "resolve", KEY_SMALL, "--reason", "timing", "--note", "tomorrow",
        "--db", str(db),
    )  # fmt: skip
    assert code == 0, err
    assert (_lines(db)[-1]["action"], _lines(db)[-1]["who"]) == ("resolve", "alice")
    assert _state(db, KEY_SMALL) == "resolved_manually"
    _verified(db)


def test_a_viewers_cli_action_is_refused_with_one_line_and_exit_2(db: Path) -> None:
    for args in (
        ("findings", "ack", KEY_SHORT, "--note", "seen"),
        ("findings", "assign", KEY_SHORT, "--to", "vic"),
        ("match", "ORD-1", "pay_1", "--note", "same", "--force"),
        ("close", "2026-10", "--sign-off", "Vic", "--note", "done"),
    ):
        code, out, err = _recon("vic", *args, "--db", str(db))
        assert code == 2, (args, out, err)
        assert len(err.strip().splitlines()) == 1, err
        assert "viewer" in err
        assert "Traceback" not in err
    stranger = _recon("mallory", "findings", "ack", KEY_SHORT, "--note", "x", "--db", str(db))
    assert stranger[0] == 2
    assert "RECON_USER=mallory is no user of the workbench" in stranger[2]
    assert [x for x in _lines(db) if x["action"] != "login"] == []


def test_self_approval_from_the_cli_is_refused(db: Path) -> None:
    code, out, err = _recon(
        "bob", "findings", "resolve", KEY_SMALL, "--reason", "written_off", "--note", "small",
        "--db", str(db),
    )  # fmt: skip
    assert code == 0, err
    pid = str(_lines(db)[-1]["proposal"])
    assert pid in out
    listed = _recon("carol", "proposals", "list", "--db", str(db))
    assert pid in listed[1]
    selfish = _recon("bob", "proposals", "approve", pid, "--note", "mine", "--db", str(db))
    assert selfish[0] == 2
    assert "four eyes" in selfish[2]
    assert len(selfish[2].strip().splitlines()) == 1
    preparer = _recon("alice", "proposals", "approve", pid, "--db", str(db))
    assert preparer[0] == 2
    assert "preparer" in preparer[2]
    code, _, err = _recon("carol", "proposals", "approve", pid, "--note", "agreed", "--db", str(db))
    assert code == 0, err
    assert [(x["action"], x["who"]) for x in _lines(db)] == [
        ("propose", "bob"),
        ("approve", "carol"),
        ("resolve", "bob"),
    ]
    assert _lines(db)[-1]["approved_by"] == "carol"
    assert _state(db, KEY_SMALL) == "resolved_manually"
    twice = _recon("carol", "proposals", "approve", pid, "--db", str(db))
    assert twice[0] == 1
    assert "already approved by carol" in twice[2]
    _verified(db)


def test_a_cli_manual_match_is_proposed_and_applied_when_approved(db: Path) -> None:
    refused = _recon("alice", "match", "ORD-1", "pay_1", "--note", "same shop", "--db", str(db))
    assert refused[0] == 2  # 8.50 against 10.00: beyond the tolerance, as without users
    assert "--force" in refused[2]
    code, out, err = _recon(
        "alice", "match", "ORD-1", "pay_1", "--note", "same shop", "--force", "--db", str(db)
    )
    assert code == 0, err
    assert "proposed matching ORD-1 with pay_1 (forced:" in out
    pid = str(_lines(db)[-1]["proposal"])
    assert '"action":"match"' not in acks_path(db).read_text()  # nothing matched yet
    code, _, err = _recon("bob", "proposals", "approve", pid, "--note", "ok", "--db", str(db))
    assert code == 0, err
    match = next(x for x in _lines(db) if x["action"] == "match")
    assert (match["who"], match["approved_by"], match["proposal"]) == ("alice", "bob", pid)
    con = duckdb.connect(str(db), read_only=True)
    try:
        links = con.execute("SELECT payment_id, rule FROM ledger_links WHERE order_key = 'ORD-1'")
        linked = links.fetchall()
        manual = con.execute(
            "SELECT who, state FROM ledger_manual_matches WHERE order_key = 'ORD-1'"
        ).fetchall()
    finally:
        con.close()
    assert linked == [("pay_1", "manual")]  # applied at once, as `recon match` without users
    assert manual == [("alice", "applied")]
    _verified(db)


def test_a_worklist_row_with_a_write_off_becomes_a_proposal(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "worklist.xlsx"
    code, _, err = _recon("alice", "findings", "export", str(out), "--db", str(db))
    assert code == 0, err
    wb = openpyxl.load_workbook(out)
    ws = wb["Worklist"]
    header = [c.value for c in ws[1]]
    fill = {
        KEY_BIG: {"action": "resolve", "reason": "written_off", "note": "uncollectable"},
        KEY_SHORT: {"action": "assign", "owner": "alice", "note": "mine"},
        KEY_SUGGEST: {"action": "match", "note": "the suggested payment"},
    }
    rows: dict[str, int] = {}
    for row in ws.iter_rows(min_row=2):
        rows[str(row[0].value)] = row[0].row
        for column, value in fill.get(str(row[0].value), {}).items():
            row[header.index(column)].value = value
    wb.save(out)
    code, stdout, err = _recon("alice", "findings", "import", str(out), "--db", str(db))
    assert code == 0, stdout + err
    assert f"row {rows[KEY_SHORT]}: assigned {KEY_SHORT}" in stdout
    assert f"row {rows[KEY_BIG]}: proposed (resolved manually {KEY_BIG}): P" in stdout
    assert f"row {rows[KEY_SUGGEST]}: proposed (matched {KEY_SUGGEST}): P" in stdout
    assert "2 proposed for an approver" in stdout.splitlines()[-1]
    actions = [(x["action"], x.get("kind"), x["who"]) for x in _lines(db)]
    assert sorted(actions, key=str) == sorted(
        [("assign", None, "alice"), ("propose", "resolve", "alice"), ("propose", "match", "alice")],
        key=str,
    )
    assert _state(db, KEY_BIG) != "resolved_manually"
    again = _recon("alice", "findings", "import", str(out), "--db", str(db))
    assert again[0] == 0, again[1] + again[2]
    assert f"row {rows[KEY_BIG]}: already proposed (resolved manually {KEY_BIG}, P" in again[1]
    assert f"row {rows[KEY_SUGGEST]}: already proposed (matched {KEY_SUGGEST}, P" in again[1]
    assert len(_lines(db)) == 3
    viewer = _recon("vic", "findings", "import", str(out), "--db", str(db))
    assert viewer[0] == 2
    assert "viewer" in viewer[2]
    _verified(db)
