"""Books that cannot fool recon: an input with no rows, or far fewer than last night, is
suspect — its checks are not evaluated with the reason, nothing it judged is resolved, the run
is incomplete — until it is accepted for a night with a note kept in the audit trail."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest

from recon.config.settings import settings_from
from recon.errors import ConfigError
from recon.findings.acks import AckLog, acks_path
from recon.ledger.loading import accept_books, load_books
from recon.sandbox.data import Dataset
from recon.sandbox.ledger import make_books, write_books

from .support import RESOURCES, ledger_findings, load_dataset, warehouse

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)
RUNS = [f"2026112{n}T020000Z-00000{n}" for n in range(1, 6)]


def _night(
    con: duckdb.DuckDBPyConnection, tmp: Path, dataset: Dataset, n: int, settings: object
) -> tuple[str, datetime]:
    run_id, at = RUNS[n], ANCHOR + timedelta(days=n, hours=2)
    load_dataset(con, tmp / f"n{n}", dataset, at, resources=RESOURCES, run_id=run_id)
    return run_id, at


def _states(con: duckdb.DuckDBPyConnection, run_id: str, check: str) -> dict[str, int]:
    return dict(
        con.execute(
            "SELECT state, count(*) FROM findings WHERE run_id = ? AND check_name = ? GROUP BY 1",
            [run_id, check],
        ).fetchall()
    )


@pytest.fixture
def books(tmp_path: Path) -> tuple[Dataset, dict[str, Path], Path]:
    dataset = Dataset(7, 800, anchor=ANCHOR)
    paths = write_books(make_books(dataset), tmp_path / "books", formats=("csv",))
    return dataset, {k: v[0] for k, v in paths.items()}, tmp_path / "recon.duckdb"


@pytest.mark.slow  # several nights over a sandbox warehouse: make test, not test-fast
def test_an_orders_file_with_no_rows_is_suspect_and_resolves_nothing(
    tmp_path: Path, books: tuple[Dataset, dict[str, Path], Path]
) -> None:
    dataset, paths, db = books
    settings = settings_from(db=str(db), **{f"ledger_{k}": str(v) for k, v in paths.items()})
    con = warehouse(db)
    run1, at1 = _night(con, tmp_path, dataset, 0, settings)
    first = load_books(con, settings, run1)
    assert not first.suspect
    ledger_findings(con, run1, at1)
    before = _states(con, run1, "ledger_amount_mismatch")
    orders = pl.read_csv(paths["orders"], infer_schema=False)
    full = orders.height
    orders.head(0).write_csv(paths["orders"])  # the header only

    run2, at2 = _night(con, tmp_path, dataset, 1, settings)
    second = load_books(con, settings, run2)
    assert [i.input for i in second.suspect] == ["orders"]
    status, reason = con.execute(
        "SELECT status, reason FROM runs WHERE run_id = ?", [run2]
    ).fetchone()  # type: ignore[misc]
    assert status == "incomplete"
    assert reason.startswith("books suspect: orders: 0 rows, last night ")
    _, checks = ledger_findings(con, run2, at2)
    why = dict(
        con.execute(
            "SELECT check_name, reason FROM check_runs "
            "WHERE run_id = ? AND status = 'not_evaluated'",
            [run2],
        ).fetchall()
    )
    assert checks["ledger_amount_mismatch"] == "not_evaluated"
    assert checks["ledger_payment_missing_from_books"] == "not_evaluated"
    assert "ledger_orders suspect: orders: 0 rows, last night" in why["ledger_amount_mismatch"]
    assert checks["ledger_invoice_mismatch"] in ("passed", "failed")  # the invoices are fine
    # nothing resolved, nothing new: the breaks stay open
    assert _states(con, run2, "ledger_amount_mismatch") == {"open": sum(before.values())}
    assert "new" not in _states(con, run2, "ledger_payment_missing_from_books")
    # the orders snapshot is the last good one
    assert con.execute("SELECT count(*) FROM ledger_orders").fetchone()[0] > 0  # type: ignore[index]

    # accepted with a note: the next night reads it, and the trail says who and why
    accept_books(settings, ["orders"], "shop migrated; orders move to the new system")
    run3, at3 = _night(con, tmp_path, dataset, 2, settings)
    third = load_books(con, settings, run3)
    assert not third.suspect
    assert third.inputs[0].accepted
    assert "shop migrated" in str(third.inputs[0].accepted)
    status3 = con.execute("SELECT status FROM runs WHERE run_id = ?", [run3]).fetchone()
    assert status3 == ("complete",)
    _, checks3 = ledger_findings(con, run3, at3)
    assert checks3["ledger_amount_mismatch"] == "passed"
    lines = AckLog(acks_path(db)).records(["accept_books"])
    assert [(x["input"], x["note"]) for x in lines] == [
        ("orders", "shop migrated; orders move to the new system")
    ]
    # the acceptance was for that night only: the next night compares with it (0 rows)
    run4, _ = _night(con, tmp_path, dataset, 3, settings)
    assert [i.input for i in load_books(con, settings, run4).suspect] == ["orders"]
    assert full > 0
    con.close()


def test_a_shrunk_input_below_the_ratio_is_suspect_and_a_small_dip_is_not(
    tmp_path: Path, books: tuple[Dataset, dict[str, Path], Path]
) -> None:
    dataset, paths, db = books
    settings = settings_from(db=str(db), ledger_orders=str(paths["orders"]))
    con = warehouse(db)
    run1, _ = _night(con, tmp_path, dataset, 0, settings)
    load_books(con, settings, run1)
    orders = pl.read_csv(paths["orders"], infer_schema=False)
    orders.head(int(orders.height * 0.8)).write_csv(paths["orders"])
    run2, _ = _night(con, tmp_path, dataset, 1, settings)
    assert not load_books(con, settings, run2).suspect
    orders.head(int(orders.height * 0.3)).write_csv(paths["orders"])
    run3, _ = _night(con, tmp_path, dataset, 2, settings)
    (suspect,) = load_books(con, settings, run3).suspect
    assert "(fewer than RECON_LEDGER_MIN_RATIO 0.5 of them)" in str(suspect.suspect)
    con.close()


def test_the_first_night_of_an_empty_input_is_suspect(tmp_path: Path) -> None:
    empty = tmp_path / "orders.csv"
    empty.write_text("reference,order_id,amount_minor,currency,status,created_at\n")
    db = tmp_path / "recon.duckdb"
    settings = settings_from(db=str(db), ledger_orders=str(empty))
    con = warehouse(db)
    run1, _ = _night(con, tmp_path, Dataset(7, 200, anchor=ANCHOR), 0, settings)
    (suspect,) = load_books(con, settings, run1).suspect
    assert suspect.suspect == "orders: 0 rows, the first night of this input"
    con.close()


def test_accepting_needs_a_note_and_a_configured_input(tmp_path: Path) -> None:
    empty = tmp_path / "orders.csv"
    empty.write_text("reference,order_id,amount_minor,currency,status,created_at\n")
    settings = settings_from(db=str(tmp_path / "recon.duckdb"), ledger_orders=str(empty))
    with pytest.raises(ConfigError, match="--note"):
        accept_books(settings, ["orders"], " ")
    with pytest.raises(ConfigError, match="not configured"):
        accept_books(settings, ["refunds"], "why")
    with pytest.raises(ConfigError, match="not one of"):
        accept_books(settings, ["payments"], "why")


def test_nightly_refuses_a_note_without_accept_books(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from recon.cli import app

    result = CliRunner().invoke(app, ["nightly", "--note", "why", "--db", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "--note: goes with --accept-books INPUT" in result.output
