"""The matching rules and the suspect-books guard end to end: the nightly steps against the
sandbox over HTTP (a real server on 127.0.0.1).

- every rule links exactly what the oracle says (precision and recall 100% per rule) and the
  ledger findings equal the truth, across seeds, sizes and settings;
- an orders file with only its header: the night is incomplete (exit 3), the report and the
  alert say so first, nothing is resolved; accepted with a note, the next night is complete.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from recon.config.settings import load_settings
from recon.findings.acks import acks_path
from recon.ledger.loading import accept_books
from recon.night import nightly as steps
from recon.night.notify import alert_for
from recon.sandbox.data import Dataset
from recon.sandbox.ledger import MatchParams, ledger_links, ledger_truth, make_books, write_books

from .support import keys, score
from .test_ledger_nightly import findings, overrides, sandbox

pytestmark = pytest.mark.integration

PATTERN = "^#?(.*)$"


def _query(db: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(
    ("seed", "payments", "tolerance", "pattern"),
    [(7, 1000, 0, None), (11, 3000, 5, PATTERN), (5, 6000, 5, PATTERN)],
)
def test_every_rule_over_http_has_precision_and_recall_100(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    payments: int,
    tolerance: int,
    pattern: str | None,
) -> None:
    dataset = Dataset(seed, payments)
    books = make_books(dataset)
    paths = write_books(books, tmp_path / "books", formats=("csv",))
    monkeypatch.setenv("RECON_LEDGER_TOLERANCE_MINOR", str(tolerance))
    if pattern:
        (tmp_path / "recon.toml").write_text(f'[ledger.match]\nbooks_reference = "{pattern}"\n')
    over = overrides(tmp_path, "", {f"ledger_{k}": str(v[0]) for k, v in paths.items()})
    with sandbox(seed=seed, payments=payments) as url:
        summary = steps.run_local({**over, "base_url": url})
    assert summary.exit_code == steps.EXIT_COMPLETE
    db = Path(over["db"])
    (as_of,) = _query(db, "SELECT started_at FROM runs WHERE run_id = ?", [summary.run_id])[0]
    params = MatchParams(tolerance_minor=tolerance, books_pattern=pattern)
    expected: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for order, payment, rule in ledger_links(dataset, books, params):
        expected[rule].add((order, payment))
    got: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for order, payment, rule in _query(db, "SELECT order_key, payment_id, rule FROM ledger_links"):
        got[rule].add((order, payment))
    for rule in set(expected) | set(got):
        assert got[rule] == expected[rule], rule
    assert {"exact_reference", "normalised_reference", "payment_reference"} <= set(got)
    if tolerance:
        assert got["amount_tolerance"]
    truth = ledger_truth(dataset, books, as_of=as_of, params=params)
    score(findings(db, summary.run_id), keys(truth))


def test_an_orders_file_with_no_rows_makes_the_night_incomplete_until_accepted(
    tmp_path: Path,
) -> None:
    seed, payments = 13, 1200
    paths = write_books(make_books(Dataset(seed, payments)), tmp_path / "books", ("csv",))
    books = {f"ledger_{k}": str(v[0]) for k, v in paths.items()}
    orders = pl.read_csv(paths["orders"][0], infer_schema=False)
    with sandbox(seed=seed, payments=payments) as url:
        over = overrides(tmp_path, url, books)
        db = Path(over["db"])
        first = steps.run_local(over)
        assert first.exit_code == steps.EXIT_COMPLETE
        night1 = findings(db, first.run_id)
        orders.head(0).write_csv(paths["orders"][0])
        second = steps.run_local(over)
        assert (second.status, second.exit_code) == ("incomplete", steps.EXIT_INCOMPLETE)
        assert str(second.reason).startswith(
            f"books suspect: orders: 0 rows, last night {orders.height - 3:,}"
        )
        report = (tmp_path / "reports" / second.run_id / "report.md").read_text()
        head = "\n".join(report.splitlines()[:8])
        assert "books suspect: orders: 0 rows" in head
        assert "Books orders suspect, not read" in report
        first_line = alert_for(second).text().splitlines()[0]
        assert "incomplete (exit 3): books suspect: orders: 0 rows" in first_line
        resolved = _query(
            db,
            "SELECT count(*) FROM findings WHERE run_id = ? AND state = 'resolved' "
            "AND starts_with(check_name, 'ledger_')",
            [second.run_id],
        )
        assert resolved == [(0,)]
        assert findings(db, second.run_id) >= {k for k in night1 if k[1] == "order"}
        settings = load_settings(**over)
        accept_books(settings, ["orders"], "the shop moved its orders to a new system")
        third = steps.run_local(over)
    assert (third.status, third.exit_code) == ("complete", steps.EXIT_COMPLETE)
    accepted = _query(
        db,
        "SELECT accepted FROM ledger_loads WHERE run_id = ? AND input = 'orders'",
        [third.run_id],
    )
    assert "the shop moved its orders" in str(accepted[0][0])
    assert acks_path(db).read_text().count('"accept_books"') == 1
