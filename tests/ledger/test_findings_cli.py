"""`recon findings list|ack|unack` on a small published warehouse: the audit trail, the
states, the filters, and the log's robustness."""

from __future__ import annotations

import getpass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.findings.acks import AckLog, acks_path

from .support import warehouse

NOW = datetime.now(UTC)
KEY_A = "ledger_amount_mismatch:ORD-1:provider_short"
KEY_B = "ledger_payment_missing_from_books:pay_2:not_in_books"
KEY_C = "over_refunded:pay_3:over_refunded"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "recon.duckdb"
    path.parent.mkdir()
    con = warehouse(path)
    con.execute(
        "INSERT INTO runs (run_id, started_at, status, loaded_at) VALUES "
        "('r0', ?, 'complete', ?), ('r1', ?, 'complete', ?)",
        [NOW - timedelta(days=10), NOW, NOW, NOW],
    )
    rows = [
        (KEY_A, "new", "order", "ORD-1", "EUR", 150, "books EUR 10.00, provider EUR 8.50", "r1"),
        (KEY_B, "open", "payment", "pay_2", "EUR", 900, "provider confirmed EUR 9.00", "r0"),
        (KEY_C, "open", "payment", "pay_3", "USD", 50, "refunds 3 days old", "r0"),
    ]
    for key, state, entity, eid, cur, amount, detail, first in rows:
        check, _, issue = key.split(":")
        con.execute(
            "INSERT INTO findings (run_id, check_name, severity, finding_key, state, "
            "entity, entity_id, currency, amount_minor, issue_type, detail, first_seen_run) "
            "VALUES ('r1', ?, 'error', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [check, key, state, entity, eid, cur, amount, issue, detail, first],
        )
    con.close()
    return path


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["findings", *args])
    return result.exit_code, result.stdout, result.stderr


def test_ack_needs_a_note_and_a_known_key(db: Path) -> None:
    code, _, err = _run("ack", KEY_A, "--note", " ", "--db", str(db))
    assert (code, err.strip()) == (
        2,
        "recon: bad setting --note: must say why the findings are acknowledged",
    )
    code, _, err = _run("ack", "nope:x:y", "--note", "n", "--db", str(db))
    assert code == 2
    assert "nope:x:y: not an unresolved finding of the latest run" in err
    assert not acks_path(db).exists()


def test_an_ack_is_audited_counted_apart_and_withdrawn(db: Path) -> None:
    code, out, _ = _run("ack", KEY_A, KEY_C, "--note", "FX order, ticket 12", "--db", str(db))
    assert code == 0
    assert "acknowledged 2 finding(s)" in out
    lines = [orjson.loads(x) for x in acks_path(db).read_bytes().splitlines()]
    assert [(x["action"], x["finding_key"], x["who"], x["note"]) for x in lines] == [
        ("ack", KEY_A, f"os:{getpass.getuser()}", "FX order, ticket 12"),
        ("ack", KEY_C, f"os:{getpass.getuser()}", "FX order, ticket 12"),
    ]
    assert lines[0]["amounts"] == {
        "currency": "EUR",
        "amount_minor": 150,
        "sides": "books EUR 10.00, provider EUR 8.50",
    }
    assert lines[1]["amounts"]["sides"] is None  # not a ledger finding: its amount alone
    code, out, err = _run("list", "--db", str(db))
    states = {line.split()[1]: line.split()[0] for line in out.splitlines()[1:]}
    assert states == {KEY_A: "acknowledged", KEY_B: "open", KEY_C: "acknowledged"}
    assert err.strip() == "1 open (0 new), 0 investigating, 2 acknowledged, 0 resolved manually"
    _, out, _ = _run("list", "--state", "acknowledged", "--db", str(db))
    # the most severe, then the oldest first (KEY_C was first seen a run before KEY_A)
    assert [line.split()[1] for line in out.splitlines()[1:]] == [KEY_C, KEY_A]
    assert "acknowledged by" in out
    code, _, _ = _run("unack", KEY_C, "--note", "wrong", "--db", str(db))
    assert code == 0
    _, out, _ = _run("list", "--state", "open", "--db", str(db))
    assert [line.split()[1] for line in out.splitlines()[1:]] == [KEY_B, KEY_C]
    code, _, err = _run("unack", KEY_B, "--db", str(db))
    assert (code, "not acknowledged" in err) == (2, True)


def test_filters_by_check_state_and_age(db: Path) -> None:
    _, out, _ = _run("list", "--check", "ledger_amount_mismatch", "--db", str(db))
    assert [line.split()[1] for line in out.splitlines()[1:]] == [KEY_A]
    _, out, _ = _run("list", "--state", "new", "--db", str(db))
    assert [line.split()[1] for line in out.splitlines()[1:]] == [KEY_A]
    _, out, _ = _run("list", "--older-than", "7d", "--db", str(db))
    assert [line.split()[1] for line in out.splitlines()[1:]] == [KEY_B, KEY_C]
    code, _, err = _run("list", "--older-than", "a week", "--db", str(db))
    assert code == 2
    assert "is not a duration like 7d" in err


def test_an_until_in_the_past_is_refused(db: Path) -> None:
    code, _, err = _run("ack", KEY_A, "--note", "n", "--until", "2001-01-01", "--db", str(db))
    assert code == 2
    assert "--until: 2001-01-01 has already passed" in err


def test_a_line_cut_by_a_crash_is_skipped_and_nothing_else(db: Path) -> None:
    log = AckLog(acks_path(db))
    _run("ack", KEY_A, "--note", "kept", "--db", str(db))
    with acks_path(db).open("ab") as fh:
        fh.write(b'{"action": "ack", "finding_key": "ledger_')  # a write cut by kill -9
    assert [(e.seq, e.finding_key, e.note) for e in log.read()] == [(1, KEY_A, "kept")]
    _run("ack", KEY_B, "--note", "after the crash", "--db", str(db))
    events = [(e.seq, e.finding_key, e.note) for e in log.read()]
    assert events == [(1, KEY_A, "kept"), (3, KEY_B, "after the crash")]
