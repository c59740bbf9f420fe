"""A break that comes back keeps its first sighting: state `reopened`, its reopen count, and
the two ages (item_age_days: the item's own date; known_days: since recon first saw it) in
findings_current; `recon findings list --older-than` counts from the first sighting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.config.settings import settings_from
from recon.findings.listing import Filters, list_findings, parse_age
from recon.ledger.loading import load_books
from recon.sandbox.data import Dataset
from recon.sandbox.ledger import make_books, write_books
from recon.warehouse.published import prepare_for_readers

from .support import RESOURCES, ledger_findings, load_dataset, warehouse

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)

pytestmark = [pytest.mark.slow]  # five nights over a sandbox warehouse: make test, not test-fast


def _set_amount(path: Path, reference: str, amount: int) -> None:
    orders = pl.read_csv(path, infer_schema=False)
    orders.with_columns(
        pl.when(pl.col("reference") == reference)
        .then(pl.lit(str(amount)))
        .otherwise(pl.col("amount_minor"))
        .alias("amount_minor")
    ).write_csv(path)


def test_a_break_that_comes_back_keeps_its_first_sighting(tmp_path: Path) -> None:
    dataset = Dataset(7, 600, anchor=ANCHOR)
    paths = write_books(make_books(dataset), tmp_path / "books", formats=("csv",))
    orders = paths["orders"][0]
    db = tmp_path / "recon.duckdb"
    settings = settings_from(db=str(db), ledger_orders=str(orders))
    con = warehouse(db)
    runs = []

    def night(n: int) -> str:
        run_id, at = f"2026112{n}T020000Z-00000{n}", ANCHOR + timedelta(days=n, hours=2)
        load_dataset(con, tmp_path / f"n{n}", dataset, at, resources=RESOURCES, run_id=run_id)
        load_books(con, settings, run_id)
        ledger_findings(con, run_id, at)
        runs.append(run_id)
        return run_id

    night(1)
    key, reference, amount = con.execute(
        "SELECT f.finding_key, f.entity_id, p.amount_minor FROM findings AS f "
        "JOIN payments AS p ON p.reference = f.entity_id "
        "WHERE f.check_name = 'ledger_amount_mismatch' ORDER BY f.finding_key LIMIT 1"
    ).fetchone()  # type: ignore[misc]
    wrong = pl.read_csv(orders, infer_schema=False).filter(pl.col("reference") == reference)
    _set_amount(orders, reference, amount)  # fixed in the books
    night(2)
    _set_amount(orders, reference, int(wrong["amount_minor"][0]))  # and broken again
    night(3)
    _set_amount(orders, reference, amount)
    night(4)
    _set_amount(orders, reference, int(wrong["amount_minor"][0]))
    run5 = night(5)

    rows = con.execute(
        "SELECT run_id, state, first_seen_run, reopen_count FROM findings "
        "WHERE finding_key = ? ORDER BY run_id",
        [key],
    ).fetchall()
    assert [r[1] for r in rows] == ["new", "resolved", "reopened", "resolved", "reopened"]
    assert {r[2] for r in rows} == {runs[0]}
    assert [r[3] for r in rows] == [0, 0, 1, 1, 2]
    counts = con.execute(
        "SELECT new_count, closing_count FROM check_runs WHERE run_id = ? "
        "AND check_name = 'ledger_amount_mismatch'",
        [run5],
    ).fetchone()
    assert counts is not None
    assert counts[0] >= 1  # a reopened finding counts among the night's new ones

    con.close()
    prepare_for_readers(db)  # the analysts' views, as published
    view = duckdb.connect(str(db), read_only=True)
    try:
        row = view.execute(
            "SELECT state, first_seen_run, reopen_count, item_at, item_age_days, known_days, "
            "age_days FROM findings_current WHERE finding_key = ?",
            [key],
        ).fetchone()
    finally:
        view.close()
    assert row is not None
    state, first, reopened, item_at, item_age, known, age = row
    assert (state, first, reopened) == ("reopened", runs[0], 2)
    assert known == age == 4  # nights 1 to 5, a day apart
    assert item_at is not None
    assert item_age >= 5  # the order is older than the first night (planted >= 5 days back)
    found = {f.finding_key: f for f in list_findings(db, tmp_path / "acks.jsonl")}
    assert found[key].state == "reopened"
    assert found[key].first_seen_run == runs[0]  # --older-than counts from the first sighting
    now = ANCHOR + timedelta(days=5, hours=3)
    older = list_findings(db, tmp_path / "a.jsonl", older_than=parse_age("3d"), now=now)
    assert key in {f.finding_key for f in older}
    newer = list_findings(db, tmp_path / "a.jsonl", older_than=parse_age("5d"), now=now)
    assert key not in {f.finding_key for f in newer}
    # the work state says it came back, and `open` still selects it
    assert found[key].work_state == "reopened"
    reopened = list_findings(db, tmp_path / "a.jsonl", filters=Filters(state="reopened"))
    assert key in {f.finding_key for f in reopened}
    opened = list_findings(db, tmp_path / "a.jsonl", filters=Filters(state="open"))
    assert key in {f.finding_key for f in opened}
    # the other age: the item's own date, older than recon's knowledge of the break
    assert found[key].item_at is not None
    item_days = (now - found[key].item_at).days
    by_item = Filters(item_older_than=parse_age(f"{item_days - 1}d"))
    assert key in {
        f.finding_key for f in list_findings(db, tmp_path / "a.jsonl", filters=by_item, now=now)
    }
    too_old = Filters(item_older_than=parse_age(f"{item_days + 1}d"))
    assert key not in {
        f.finding_key for f in list_findings(db, tmp_path / "a.jsonl", filters=too_old, now=now)
    }
    # and the command line names both ages and the state
    result = CliRunner().invoke(app, ["findings", "list", "--db", str(db), "--state", "reopened"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if key in x)
    assert line.startswith("reopened")
    assert "known since 2026-11-21" in line
    assert f"item of {found[key].item_at.date().isoformat()}" in line
