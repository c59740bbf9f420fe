"""At a million orders against a million payments, a rule's links made in one statement (its
pairs joined again to both sides, each cardinality counted by a window over them) ran out
of the night's 192 MiB (issue 38); they are now made a join at a time through temp tables,
counted by GROUP BY. The same links, and so the same classification, as in one go — on
the matching benchmark's data (lower-case and `#` references, amounts within a tolerance,
carts of two orders, orders without a reference proposed), at small scale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from benchmarks._books import books_orders, provider_side
from recon.config.settings import settings_from
from recon.ledger.loading import load_books

# What recon.ledger.matching ran before, as one statement per rule (kept here as the
# reference): the rule's pairs joined to both sides and kept to the cardinality by windows.
_ONE_GO = """
CREATE OR REPLACE TEMP TABLE match_free AS
WITH found AS (SELECT DISTINCT order_key, payment_id FROM ({sql}) AS rule_rows)
SELECT f.*, o.order_row, p.payment_row FROM found AS f
JOIN unmatched_orders AS o ON o.order_key = f.order_key
JOIN unmatched_payments AS p ON p.id = f.payment_id
"""
_ONE_ORDER = "count(*) OVER (PARTITION BY payment_id) = 1"
_ONE_PAYMENT = "count(*) OVER (PARTITION BY order_key) = 1"
_ONE_GO_KEEP = {
    "1:1": f"QUALIFY {_ONE_ORDER} AND {_ONE_PAYMENT}",
    "1:N": f"QUALIFY {_ONE_ORDER}",
    "N:1": f"QUALIFY {_ONE_PAYMENT}",
}


def _load(folder: Path, *, one_go: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    db = folder / "recon.duckdb"
    con = duckdb.connect(str(db))
    con.execute("SET TimeZone = 'UTC'")
    provider_side(con, 3_000)
    orders = books_orders(con, folder / "orders.csv")
    with monkeypatch.context() as m:
        if one_go:
            m.setattr("recon.ledger.matching._FOUND", _ONE_GO)
            m.setattr("recon.ledger.matching._FOUND_ORDERS", "SELECT 1")
            m.setattr("recon.ledger.matching._FREE", "SELECT 1")
            m.setattr("recon.ledger.matching._KEEP", _ONE_GO_KEEP)
        settings = settings_from(
            db=str(db),
            ledger_orders=str(orders),
            ledger_tolerance_minor=5,
            ledger={"match": {"books_reference": "^#?(.*)$"}},
        )
        load_books(con, settings, "r1")
    out = {
        "links": con.execute(
            "SELECT order_key, payment_id, rule FROM ledger_links ORDER BY ALL"
        ).fetchall(),
        "suggestions": con.execute(
            "SELECT order_key, payment_id, score FROM ledger_suggestions ORDER BY ALL"
        ).fetchall(),
        "matches": con.execute(
            "SELECT * EXCLUDE (run_id) FROM ledger_matches ORDER BY entity, entity_id"
        ).fetchall(),
        "kinds": {k for (k,) in con.execute("SELECT DISTINCT kind FROM ledger_matches").fetchall()},
        "temp": con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE temporary ORDER BY ALL"
        ).fetchall(),
    }
    con.close()
    return out


def test_links_made_a_join_at_a_time_are_those_made_in_one_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "steps").mkdir()
    (tmp_path / "one").mkdir()
    steps = _load(tmp_path / "steps", one_go=False, monkeypatch=monkeypatch)
    one = _load(tmp_path / "one", one_go=True, monkeypatch=monkeypatch)
    rules = {rule for _, _, rule in steps["links"]}
    # every kind of link the data plants is there (so the comparison covers each rule)
    assert {"exact_reference", "normalised_reference", "amount_tolerance", "payment_reference"} <= (
        rules
    )
    assert steps["suggestions"]
    assert steps["links"] == one["links"]
    assert steps["suggestions"] == one["suggestions"]
    assert steps["matches"] == one["matches"]
    assert {"matched", "cart", "payment_missing_from_books"} <= steps["kinds"]  # breaks too
    assert steps["temp"] == []  # the steps' tables are dropped with the engine's


def test_orders_and_payments_classified_a_range_at_a_time_are_classified_as_in_one_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ranges of 7 rowids: carts (two orders of one payment) straddle ranges too
    (tmp_path / "ranges").mkdir()
    (tmp_path / "whole").mkdir()
    whole = _load(tmp_path / "whole", one_go=False, monkeypatch=monkeypatch)
    monkeypatch.setattr("recon.ledger.loading.CLASSIFY_ROWS", 7)
    ranges = _load(tmp_path / "ranges", one_go=False, monkeypatch=monkeypatch)
    assert len(whole["matches"]) > 3_000  # every order and every unlinked payment, once
    assert ranges["matches"] == whole["matches"]
    assert ranges["temp"] == []
