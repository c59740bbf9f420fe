"""States beside acknowledged (investigating with an owner, resolved manually with a reason),
every action selecting by the filters of `findings list`, and the SQL views agreeing with
the Python that decides the states."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import orjson
from typer.testing import CliRunner

from recon.cli import app
from recon.findings.acks import acks_path
from recon.findings.listing import list_findings
from recon.findings.trail_table import load_acks
from tests.ledger.support import warehouse

from .conftest import KEY_A, KEY_B, KEY_C, KEY_D, R0, R1, add_findings


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["findings", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def _states(db: Path, *filters: str) -> dict[str, str]:
    _, out, _ = _run("list", *filters, "--db", str(db))
    return {line.split()[1]: line.split()[0] for line in out.splitlines()[1:]}


def test_assign_then_resolve_each_one_audit_line(db: Path) -> None:
    assert _run("assign", KEY_B, KEY_C, "--to", "ann", "--db", str(db))[0] == 0
    code, out, err = _run(
        "resolve", KEY_C, "--reason", "timing", "--note", "settled on the 3rd", "--db", str(db)
    )
    assert (code, out.strip()) == (
        0,
        f"resolved 1 finding(s) manually (timing); audit trail: {acks_path(db)}",
    )
    assert "resolving 1 finding(s)" in err
    assert _states(db) == {
        KEY_A: "new",
        KEY_B: "investigating",
        KEY_C: "resolved_manually",
        KEY_D: "open",
    }
    lines = [orjson.loads(x) for x in acks_path(db).read_bytes().splitlines()]
    assert [(x["action"], x["finding_key"], x.get("owner"), x.get("reason")) for x in lines] == [
        ("assign", KEY_B, "ann", None),
        ("assign", KEY_C, "ann", None),
        ("resolve", KEY_C, None, "timing"),
    ]
    _, out, _ = _run("list", "--owner", "ann", "--db", str(db))
    assert [line.split()[1] for line in out.splitlines()[1:]] == [KEY_B, KEY_C]  # owner kept
    assert "resolved manually by" in out
    assert "(timing): settled on the 3rd" in out
    _, _, err = _run("list", "--db", str(db))
    assert err.strip() == "2 open (1 new), 1 investigating, 0 acknowledged, 1 resolved manually"


def test_resolve_needs_a_known_reason_and_a_note(db: Path) -> None:
    code, _, err = _run("resolve", KEY_C, "--reason", "bored", "--note", "x", "--db", str(db))
    assert code == 2
    assert "--reason: must be one of timing, provider_error, books_error" in err
    code, _, err = _run("resolve", KEY_C, "--reason", "other", "--db", str(db))
    assert (code, "--note: must say why the findings are resolved" in err) == (2, True)
    code, _, err = _run("assign", KEY_C, "--db", str(db))
    assert (code, "--to: must name who" in err) == (2, True)
    assert not acks_path(db).exists()


def test_a_lapsed_acknowledgement_says_why(db: Path) -> None:
    _run("ack", KEY_C, "--note", "known", "--db", str(db))
    _run("resolve", KEY_B, "--reason", "books_error", "--note", "fixed", "--db", str(db))
    con = duckdb.connect(str(db))
    con.execute(
        "UPDATE findings SET amount_minor = amount_minor + 1 WHERE finding_key IN (?, ?)",
        [KEY_B, KEY_C],
    )
    con.close()
    found = {f.finding_key: f for f in list_findings(db, acks_path(db))}
    day = datetime.now(UTC).date().isoformat()
    assert found[KEY_C].work_state == "open"
    assert (
        found[KEY_C].lapsed
        == f"amount changed since acknowledged by {found[KEY_C].ack.who} on {day}"
    )  # type: ignore[union-attr]
    assert found[KEY_B].lapsed.startswith("amount changed since resolved manually by")  # type: ignore[union-attr]
    _, out, _ = _run("list", "--db", str(db))
    assert "[lapsed: amount changed since acknowledged by" in out


def test_every_action_takes_the_list_filters(db: Path) -> None:
    code, _, err = _run("ack", "--currency", "eur", "--note", "EUR batch", "--db", str(db))
    assert code == 0
    assert "acknowledging 2 finding(s) (--currency eur)" in err
    assert _states(db, "--state", "acknowledged") == {KEY_A: "acknowledged", KEY_B: "acknowledged"}
    code, _, err = _run("assign", "--check", "over_refunded", "--to", "bo", "--db", str(db))
    assert code == 0
    assert _states(db, "--owner", "bo") == {KEY_C: "investigating"}
    code, _, _ = _run("unack", "--state", "acknowledged", "--currency", "EUR", "--db", str(db))
    assert code == 0
    assert _states(db, "--state", "open") == {KEY_A: "new", KEY_B: "open", KEY_D: "open"}
    code, _, err = _run("ack", "--note", "no selection", "--db", str(db))
    assert (code, "name findings by key or select them with a filter" in err) == (2, True)
    code, _, err = _run("list", "--state", "shelved", "--db", str(db))
    assert (code, "--state: must be one of open, new, investigating" in err) == (2, True)


def test_more_than_100_asks_first_unless_yes(db: Path) -> None:
    rows = [
        (f"stuck_non_final:pay_x{i}:stuck", "open", "payment", f"pay_x{i}", "GBP", i, "d", R0)
        for i in range(101)
    ]
    add_findings(db, R1, rows)
    code, _, err = _run("ack", "--currency", "GBP", "--note", "n", "--db", str(db), stdin="n\n")
    assert code == 1
    assert "acknowledging 101 finding(s)" in err
    assert "Change 101 findings?" in err
    assert "recon: nothing changed" in err
    assert not acks_path(db).exists()
    code, _, err = _run("ack", "--currency", "GBP", "--note", "n", "--db", str(db))
    assert (code, "101 findings would change: confirm with --yes" in err) == (2, True)
    code, out, _ = _run("ack", "--currency", "GBP", "--note", "n", "--db", str(db), stdin="y\n")
    assert (code, "acknowledged 101 finding(s)" in out) == (0, True)
    code, out, _ = _run("assign", "--currency", "GBP", "--to", "cy", "--yes", "--db", str(db))
    assert (code, "assigned 101 finding(s) to cy" in out) == (0, True)


def test_the_warehouse_views_agree_with_the_listing(db: Path) -> None:
    _run("ack", KEY_A, "--note", "a", "--db", str(db))
    _run("assign", KEY_B, "--to", "ann", "--db", str(db))
    _run("resolve", KEY_C, "--reason", "duplicate", "--note", "c", "--db", str(db))
    _run("ack", KEY_D, "--note", "d", "--db", str(db))
    con = duckdb.connect(str(db))
    con.execute("UPDATE findings SET amount_minor = 1 WHERE finding_key = ?", [KEY_D])
    con.close()
    con = warehouse(db)
    load_acks(con, acks_path(db))
    got = {
        r[0]: (r[1], r[2], r[3])
        for r in con.execute(
            "SELECT finding_key, work_state, owner, lapsed_reason FROM finding_states "
            "WHERE run_id = ?",
            [R1],
        ).fetchall()
    }
    con.close()
    want = {f.finding_key: (f.decided, f.owner, f.lapsed) for f in list_findings(db, acks_path(db))}
    assert got == want
    assert got[KEY_D][0] == "open"
    assert got[KEY_D][2] is not None


def test_a_repeated_resolve_is_a_no_op_that_says_so(db: Path) -> None:
    from typer.testing import CliRunner

    from recon.cli import app as cli
    from recon.findings.acks import acks_path

    from .conftest import KEY_C

    args = ["findings", "resolve", KEY_C, "--reason", "timing", "--note", "booked", "--db", str(db)]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0
    assert "resolved 1 finding(s) manually" in first.stdout
    again = CliRunner().invoke(cli, [*args[:-4], "--note", "booked again", "--db", str(db)])
    assert again.exit_code == 0
    assert f"{KEY_C}: already resolved manually by os:" in again.stdout
    assert "resolved 0 finding(s) manually" in again.stdout
    assert len(acks_path(db).read_bytes().splitlines()) == 1
