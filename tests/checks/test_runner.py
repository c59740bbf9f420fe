"""The runner: gating on resource scans, broken check files, transactions, the lifecycle."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from recon.checks import CheckParams, load_checks, run_checks
from recon.errors import CheckDefinitionError, WarehouseError

from .builder import ANCHOR, REPO, Wh

GOOD = """-- name: {name}
-- description: Payments above a thousand.
-- severity: warn
-- requires: [payments]
-- tags: [test]
SELECT 'payment' AS entity, id AS entity_id, currency, amount_minor,
       'big' AS issue_type, 'amount ' || amount_minor AS detail
FROM payments WHERE gone_in_run IS NULL AND amount_minor > 1000
"""


def _checks_dir(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "checks"
    folder.mkdir()
    for name, text in files.items():
        (folder / f"{name}.sql").write_text(text, encoding="utf-8")
    return folder


def test_incomplete_required_resource_means_not_evaluated_with_the_reason(wh: Wh) -> None:
    wh.run("r1", scans={"refunds": ("incomplete", 1), "invoices": "unavailable"})
    wh.payment("pay_1", 1000, status="refunded")
    runs = wh.checks("r1")
    assert runs["refunded_amount_mismatch"].status == "not_evaluated"
    assert runs["refunded_amount_mismatch"].reason == "refunds incomplete: 1 page failed"
    assert runs["open_invoices"].reason == "invoices unavailable; no record read"
    # Judged record by record: evaluated over the resources it can see whole.
    assert runs["stuck_non_final"].status == "passed"
    assert runs["stuck_non_final"].coverage == (
        "all 0 payments; refunds not evaluated (incomplete: 1 page failed); all 0 payment_intents"
    )
    assert runs["duplicate_payment_reference"].status == "passed"
    assert runs["extraction_completeness"].status == "failed"
    assert wh.findings("refunded_amount_mismatch") == set()


def test_a_resource_missing_from_resource_scans_is_not_complete(wh: Wh) -> None:
    wh.run("r1")
    wh.con.execute("DELETE FROM resource_scans WHERE resource = 'invoices'")
    run = wh.checks("r1", only=["open_invoices"])["open_invoices"]
    assert (run.status, run.reason) == ("not_evaluated", "invoices not scanned in this run")


BROKEN = {
    "bad_yaml": "-- name: bad_yaml\n-- description: [unclosed\nSELECT 1",
    "no_header": "SELECT 'payment' AS entity",
    "wrong_name": GOOD.format(name="other"),
    "bad_severity": GOOD.format(name="bad_severity").replace("severity: warn", "severity: high"),
    "unknown_resource": GOOD.format(name="unknown_resource").replace("[payments]", "[wallets]"),
    "two_statements": GOOD.format(name="two_statements") + "; SELECT 1",
    "trailing_semicolon": GOOD.format(name="trailing_semicolon") + ";",
    "not_a_select": GOOD.format(name="not_a_select").split("SELECT")[0] + "DELETE FROM payments",
    "unknown_param": GOOD.format(name="unknown_param").replace("> 1000", "> $threshold"),
    "missing_column": GOOD.format(name="missing_column")
    .replace("nosuch", "x")
    .replace("amount_minor > 1000", "nosuch > 1000"),
    "wrong_columns": GOOD.format(name="wrong_columns").replace(" AS detail", " AS details"),
    "runtime_error": GOOD.format(name="runtime_error").replace(
        "'amount ' || amount_minor", "CAST('x' || id AS INTEGER)::VARCHAR"
    ),
    "duplicate_keys": GOOD.format(name="duplicate_keys").replace(
        "FROM payments WHERE", "FROM payments, range(2) WHERE"
    ),
    "null_entity_id": GOOD.format(name="null_entity_id").replace(
        "id AS entity_id", "NULL AS entity_id"
    ),
}


def test_broken_check_files_are_errored_and_the_others_still_run(wh: Wh, tmp_path: Path) -> None:
    wh.run("r1")
    wh.payment("pay_big", 5000)
    folder = _checks_dir(tmp_path, {"good": GOOD.format(name="good"), **BROKEN})
    runs = wh.checks("r1", checks_dir=folder)
    assert runs["good"].status == "failed"
    assert wh.findings("good") == {("pay_big", "big")}
    for name in BROKEN:
        assert runs[name].status == "errored", (name, runs[name])
        assert runs[name].reason
        assert wh.findings(name) == set()
    assert "must equal the file stem" in (runs["wrong_name"].reason or "")
    assert "unknown parameter(s) $threshold" in (runs["unknown_param"].reason or "")
    assert "exactly entity, entity_id" in (runs["wrong_columns"].reason or "")
    assert "Conversion Error" in (runs["runtime_error"].reason or "")
    assert "finding key duplicate_keys:pay_big:big" in (runs["duplicate_keys"].reason or "")
    # The connection is still usable, in autocommit, with nothing left over.
    assert wh.con.execute("SELECT count(*) FROM check_runs").fetchone() == (len(BROKEN) + 1,)
    assert wh.con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '_recon_%'"
    ).fetchone() == (0,)


def test_evaluable_when_that_fails_makes_the_check_errored(wh: Wh, tmp_path: Path) -> None:
    wh.run("r1")
    text = GOOD.format(name="gate").replace(
        "-- tags: [test]", "-- tags: [test]\n-- evaluable_when: SELECT nosuch FROM payments"
    )
    run = wh.checks("r1", checks_dir=_checks_dir(tmp_path, {"gate": text}))["gate"]
    assert run.status == "errored"
    assert (run.reason or "").startswith("evaluable_when failed: Binder Error")


def test_run_checks_refuses_an_open_transaction_and_leaves_it_intact(wh: Wh) -> None:
    wh.run("r1")
    wh.con.execute("BEGIN")
    wh.payment("pay_uncommitted")
    with pytest.raises(WarehouseError, match="no open transaction"):
        run_checks(wh.con, run_id="r1", as_of=ANCHOR, params=CheckParams())
    wh.con.execute("COMMIT")
    assert wh.con.execute("SELECT count(*) FROM payments").fetchone() == (1,)


def test_duckdb_aborts_a_transaction_on_any_error() -> None:
    """Why run_checks keeps checks out of the load transaction (DuckDB has no savepoints)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a INTEGER)")
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(duckdb.BinderException):
        con.execute("SELECT nosuch FROM t")
    with pytest.raises(duckdb.TransactionException, match="aborted"):
        con.execute("SELECT count(*) FROM t")
    con.execute("ROLLBACK")


def test_unknown_check_in_only_is_a_config_error(wh: Wh) -> None:
    wh.run("r1")
    with pytest.raises(ValueError, match="unknown check"):
        wh.checks("r1", only=["no_such_check"])


def test_parse_errors_are_check_definition_errors() -> None:
    from recon.checks import parse_check_text

    with pytest.raises(CheckDefinitionError, match="does not parse"):
        parse_check_text(GOOD.format(name="x").replace("SELECT", "SELEKT"), name="x")


def test_rerunning_the_same_run_replaces_its_rows(wh: Wh) -> None:
    wh.run("r1")
    wh.payment("pay_1", -1)
    wh.checks("r1")
    wh.checks("r1")
    assert wh.con.execute(
        "SELECT count(*) FROM findings WHERE check_name = 'impossible_amounts'"
    ).fetchone() == (1,)
    checks = len(list((REPO / "sql" / "checks").glob("*.sql")))  # every check, one row each
    assert wh.con.execute("SELECT count(*) FROM check_runs").fetchone() == (checks,)


# The lifecycle -------------------------------------------------------------------------


def _states(wh: Wh, run_id: str, check: str) -> dict[str, tuple[str, str]]:
    rows = wh.con.execute(
        "SELECT entity_id, state, first_seen_run FROM findings WHERE run_id = ? AND check_name = ?",
        [run_id, check],
    ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def _counts(wh: Wh, run_id: str, check: str) -> tuple[int, ...]:
    row = wh.con.execute(
        "SELECT opening_count, new_count, resolved_count, closing_count, finding_count "
        "FROM check_runs WHERE run_id = ? AND check_name = ?",
        [run_id, check],
    ).fetchone()
    assert row is not None
    return tuple(row)


def _set_amount(wh: Wh, pid: str, amount: int) -> None:
    wh.con.execute("UPDATE payments SET amount_minor = ? WHERE id = ?", [amount, pid])


def test_findings_go_new_then_open_then_resolved(wh: Wh) -> None:
    check = "intent_negative_amount"
    wh.intent("pi_a", -1)
    wh.intent("pi_b", -2)
    wh.run("r1", day=0)
    wh.checks("r1")
    assert _states(wh, "r1", check) == {"pi_a": ("new", "r1"), "pi_b": ("new", "r1")}
    assert _counts(wh, "r1", check) == (0, 2, 0, 2, 2)

    wh.intent("pi_c", -3)
    wh.run("r2", day=1)
    wh.checks("r2")
    assert _states(wh, "r2", check) == {
        "pi_a": ("open", "r1"),
        "pi_b": ("open", "r1"),
        "pi_c": ("new", "r2"),
    }
    assert _counts(wh, "r2", check) == (2, 1, 0, 3, 3)

    wh.con.execute("UPDATE payment_intents SET amount_minor = 5 WHERE id IN ('pi_a', 'pi_c')")
    wh.run("r3", day=2)
    wh.checks("r3")
    assert _states(wh, "r3", check) == {
        "pi_a": ("resolved", "r1"),
        "pi_b": ("open", "r1"),
        "pi_c": ("resolved", "r2"),
    }
    assert _counts(wh, "r3", check) == (3, 0, 2, 1, 1)
    row = wh.con.execute(
        "SELECT finding_key, severity FROM findings WHERE run_id = 'r3' AND entity_id = 'pi_b' "
        "AND check_name = ?",
        [check],
    ).fetchone()
    assert row == ("intent_negative_amount:pi_b:negative_amount", "error")


def test_an_incomplete_run_never_resolves_and_carries_open_findings(wh: Wh) -> None:
    check = "refund_unknown_payment"
    wh.payment("pay_1")
    wh.refund("re_orphan", "pay_missing", 100)
    wh.refund("re_orphan2", "pay_missing", 100)
    wh.run("r1", day=0)
    wh.checks("r1")
    assert _counts(wh, "r1", check) == (0, 2, 0, 2, 2)

    # Tonight refunds are incomplete and both orphans are no longer listed: nothing resolves.
    wh.con.execute("DELETE FROM refunds")
    wh.run("r2", day=1, scans={"refunds": ("incomplete", 1)})
    runs = wh.checks("r2")
    assert runs[check].status == "not_evaluated"
    assert runs[check].reason == "refunds incomplete: 1 page failed; no record read"
    assert _states(wh, "r2", check) == {
        "re_orphan": ("open", "r1"),
        "re_orphan2": ("open", "r1"),
    }
    assert _counts(wh, "r2", check) == (2, 0, 0, 2, 0)

    # A complete night with one orphan back: the other resolves, first_seen is kept.
    wh.refund("re_orphan", "pay_missing", 100)
    wh.run("r3", day=2)
    wh.checks("r3")
    assert _states(wh, "r3", check) == {
        "re_orphan": ("open", "r1"),
        "re_orphan2": ("resolved", "r1"),
    }
    assert _counts(wh, "r3", check) == (2, 0, 1, 1, 1)


def test_an_errored_check_carries_its_open_findings(wh: Wh, tmp_path: Path) -> None:
    good = GOOD.format(name="big")
    folder = _checks_dir(tmp_path, {"big": good})
    wh.payment("pay_big", 5000)
    wh.run("r1", day=0)
    wh.checks("r1", checks_dir=folder)
    (folder / "big.sql").write_text(good.replace("FROM payments", "FROM paymentz"))
    wh.con.execute("DELETE FROM payments")
    wh.run("r2", day=1)
    run = wh.checks("r2", checks_dir=folder)["big"]
    assert run.status == "errored"
    assert _states(wh, "r2", "big") == {"pay_big": ("open", "r1")}
    assert _counts(wh, "r2", "big") == (1, 0, 0, 1, 0)


def test_per_resource_check_keeps_findings_of_an_incomplete_resource_open(wh: Wh) -> None:
    check = "impossible_amounts"
    wh.payment("pay_neg", -1)
    wh.refund("re_neg", "pay_neg", -1)
    wh.run("r1", day=0)
    wh.checks("r1")
    wh.con.execute("DELETE FROM refunds")
    wh.con.execute("UPDATE payments SET amount_minor = 1")
    wh.run("r2", day=1, scans={"refunds": ("incomplete", 1)})
    assert wh.checks("r2")[check].status == "passed"
    assert _states(wh, "r2", check) == {
        "pay_neg": ("resolved", "r1"),
        "re_neg": ("open", "r1"),
    }
    assert _counts(wh, "r2", check) == (2, 0, 1, 1, 0)


def test_counts_identity_holds_for_every_check_over_several_nights(wh: Wh) -> None:
    wh.payment("pay_r", 1000, status="refunded")
    wh.refund("re_1", "pay_r", 600)
    wh.payment("pay_dup1", reference="X")
    wh.payment("pay_dup2", reference="X")
    wh.invoice("in_open", due="2026-08-01")
    wh.intent("pi_neg", -1)
    nights: list[dict[str, str | tuple[str, int]]] = [
        {},
        {"refunds": ("incomplete", 1)},
        {"payments": "unavailable", "invoices": ("incomplete", 3)},
        {},
    ]
    for day, scans in enumerate(nights):
        run_id = f"n{day}"
        wh.run(run_id, day=day, scans=scans)
        if day == 3:
            wh.con.execute("UPDATE payments SET reference = NULL WHERE id = 'pay_dup2'")
        for run in wh.checks(run_id).values():
            assert run.opening_count + run.new_count - run.resolved_count == run.closing_count
            assert run.status != "errored", (run.check_name, run.reason)
            if run.status in ("passed", "failed"):
                assert (run.status == "failed") == (run.finding_count > 0)
    assert _counts(wh, "n3", "duplicate_payment_reference") == (2, 0, 2, 0, 0)


def test_default_checks_dir_is_the_sql_checks_folder() -> None:
    """The runner reads every file of sql/checks (tests/checks/test_check_files.py checks
    each one), so adding a check is adding a file."""
    files = sorted(p.stem for p in (REPO / "sql" / "checks").glob("*.sql"))
    assert [c.name for c in load_checks() if not isinstance(c, tuple)] == files


def test_the_example_check_in_docs_works(wh: Wh, tmp_path: Path) -> None:
    text = (REPO / "docs" / "checks.md").read_text(encoding="utf-8")
    example = text.split("## Adding a check", 1)[1].split("```sql\n", 1)[1].split("```", 1)[0]
    folder = _checks_dir(tmp_path, {"refund_without_reason": example})
    wh.run("r1")
    wh.refund("re_1", "pay_1", 250)
    run = wh.checks("r1", checks_dir=folder)["refund_without_reason"]
    assert run.status == "failed", run.reason
    assert wh.rows("refund_without_reason", "r1")[("re_1", "no_reason")]["detail"] == (
        "refund of EUR 2.50 has no reason"
    )
