"""A person's match: `recon match ORDER PAYMENT… --note` (or a suggestion's finding key) is a
line of the audit trail, honoured every night after as rule `manual`, lapsed when a side
disappears or changes amount, and undone with `recon match undo`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.config.settings import settings_from
from recon.errors import ConfigError
from recon.findings.acks import AckLog, acks_path
from recon.findings.verify import verify_trail
from recon.ledger.loading import load_books
from recon.ledger.manual import match_order, match_suggestion, undo_matches
from recon.sandbox.data import Dataset
from recon.sandbox.ledger import make_books, write_books

from .support import RESOURCES, ledger_findings, load_dataset, warehouse

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)


class Nights:
    """Nights over one warehouse file, closed between them (the CLI reads it)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.dataset = Dataset(7, 600, anchor=ANCHOR)
        self.books = make_books(self.dataset)
        paths = write_books(self.books, tmp / "books", formats=("csv",))
        self.orders = paths["orders"][0]
        self.db = tmp / "recon.duckdb"
        self.settings = settings_from(db=str(self.db), ledger_orders=str(self.orders))
        self.n = 0

    def night(self) -> set[tuple[str, str, str, str]]:
        self.n += 1
        run_id, at = f"2026112{self.n}T020000Z-00000{self.n}", ANCHOR + timedelta(days=self.n)
        con = warehouse(self.db)
        try:
            load_dataset(
                con, self.tmp / f"n{self.n}", self.dataset, at, resources=RESOURCES, run_id=run_id
            )
            load_books(con, self.settings, run_id)
            found, _ = ledger_findings(con, run_id, at)
        finally:
            con.close()
        return found

    def query(self, sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
        con = duckdb.connect(str(self.db), read_only=True)
        try:
            return con.execute(sql, params or []).fetchall()
        finally:
            con.close()


@pytest.mark.slow  # night after night over a sandbox warehouse: make test, not test-fast
def test_a_suggestion_accepted_by_hand_is_matched_every_night_until_undone(
    tmp_path: Path,
) -> None:
    nights = Nights(tmp_path)
    case = next(c for c in nights.books.cases if c["case"] == "no_reference")
    order, (payment,) = case["order"], case["payments"]
    first = nights.night()
    key = f"ledger_suggested_match:{order}:suggested"
    assert ("ledger_suggested_match", "order", order, "suggested") in first
    assert ("ledger_order_missing_at_provider", "order", order, "no_payment") in first
    log = acks_path(nights.db)
    result = CliRunner().invoke(
        app, ["match", key, "--note", "paid by phone", "--db", str(nights.db)]
    )
    assert result.exit_code == 0, result.output
    assert f"matched {order} with {payment}" in result.output
    # at once: the links and the order's row say so, its findings are resolved by hand
    assert nights.query("SELECT rule, state FROM ledger_matches WHERE entity_id = ?", [order]) == [
        ("manual", "matched")
    ]
    assert nights.query(
        "SELECT payment_id, rule FROM ledger_links WHERE order_key = ?", [order]
    ) == [(payment, "manual")]
    resolved = {e.finding_key for e in AckLog(log).read() if e.action == "resolve"}
    assert {key, f"ledger_order_missing_at_provider:{order}:no_payment"} <= resolved
    assert f"resolved {len(resolved)} finding(s) by hand" in result.output

    second = nights.night()
    assert not {f for f in second if f[2] in (order, payment)}
    assert nights.query("SELECT rule, kind FROM ledger_matches WHERE entity_id = ?", [order]) == [
        ("manual", "matched")
    ]
    (line,) = AckLog(log).records(["match"])
    assert (line["order"], line["payments"], line["note"]) == (
        order,
        {payment: line["payments"][payment]},
        "paid by phone",
    )
    # a line of the same hash-chained trail, then the resolutions of its findings
    events = AckLog(log).read()
    assert (events[0].action, events[0].finding_key) == ("match", "")
    assert {e.action for e in events[1:]} == {"resolve"}

    # the order disappears from the books: the match lapses, it is said, and not applied
    orders = pl.read_csv(nights.orders, infer_schema=False)
    orders.filter(pl.col("order_id") != order).write_csv(nights.orders)
    third = nights.night()
    assert ("ledger_manual_match_lapsed", "order", order, "lapsed") in third
    orders.write_csv(nights.orders)
    assert ("ledger_manual_match_lapsed", "order", order, "lapsed") not in nights.night()

    result = CliRunner().invoke(
        app, ["match", "undo", order, "--note", "wrong customer", "--db", str(nights.db)]
    )
    assert result.exit_code == 0, result.output
    fifth = nights.night()
    assert ("ledger_suggested_match", "order", order, "suggested") in fifth
    assert [x["action"] for x in AckLog(log).records(["match", "unmatch"])] == ["match", "unmatch"]
    assert verify_trail(log).intact  # match lines are chained like every line


def test_ambiguous_suggestions_and_unknown_sides_are_refused(tmp_path: Path) -> None:
    nights = Nights(tmp_path)
    tie = next(c for c in nights.books.cases if c["case"] == "tie")
    nights.night()
    log = acks_path(nights.db)
    with pytest.raises(ConfigError, match="ambiguous"):
        match_suggestion(nights.db, log, f"ledger_suggested_match:{tie['order']}:ambiguous", "x")
    with pytest.raises(ConfigError, match="--note"):
        match_order(nights.db, log, tie["order"], tie["payments"], "  ")
    with pytest.raises(ConfigError, match="no order of the books"):
        match_order(nights.db, log, "NOPE", tie["payments"], "x")
    with pytest.raises(ConfigError, match="no such live payment"):
        match_order(nights.db, log, tie["order"], ["pay_nope"], "x")
    with pytest.raises(ConfigError, match="not matched by hand"):
        undo_matches(log, [tie["order"]], "x")
    # naming the payment settles a tie
    match_order(nights.db, log, tie["order"], tie["payments"], "the customer confirmed")
    found = nights.night()
    assert not {f for f in found if f[2] == tie["order"]}
    result = CliRunner().invoke(app, ["match", "ORD-X", "--db", str(nights.db)])
    assert result.exit_code == 2
