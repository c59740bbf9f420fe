"""The matching rules (sql/matching/) against the sandbox's planted cases, in process (DuckDB
only): every link and its rule, and every ledger finding, equal the oracle's — precision and
recall 100% per rule — across seeds, sizes and settings (tolerance, reference pattern)."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from recon.config.settings import settings_from
from recon.ledger.loading import load_books
from recon.ledger.matching import load_rules
from recon.sandbox.data import Dataset
from recon.sandbox.ledger import MatchParams, ledger_links, ledger_truth, make_books, write_books

from .support import RUN, keys, ledger_findings, load_dataset, score, warehouse

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)
PATTERN = "^#?(.*)$"
SETTINGS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "tolerance_and_pattern": {
        "ledger_tolerance_minor": 5,
        "ledger": {"match": {"books_reference": PATTERN}},
    },
    "bps": {"ledger_tolerance_bps": 30},
}


def _params(name: str) -> MatchParams:
    values = SETTINGS[name]
    return MatchParams(
        tolerance_minor=values.get("ledger_tolerance_minor", 0),
        tolerance_bps=values.get("ledger_tolerance_bps", 0),
        books_pattern=values.get("ledger", {}).get("match", {}).get("books_reference"),
    )


def per_rule(links: set[tuple[str, str, str]]) -> dict[str, set[tuple[str, str]]]:
    out: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for order, payment, rule in links:
        out[rule].add((order, payment))
    return out


def db_links(con: duckdb.DuckDBPyConnection) -> set[tuple[str, str, str]]:
    rows = con.execute("SELECT order_key, payment_id, rule FROM ledger_links").fetchall()
    return {(str(r[0]), str(r[1]), str(r[2])) for r in rows}


@pytest.mark.parametrize(
    ("seed", "payments"),
    [
        (7, 400),
        pytest.param(11, 2500, marks=pytest.mark.slow),
        pytest.param(3, 6000, marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("setting", list(SETTINGS))
def test_every_rule_links_exactly_what_the_truth_says(
    tmp_path: Path, seed: int, payments: int, setting: str
) -> None:
    dataset = Dataset(seed, payments, anchor=ANCHOR)
    books = make_books(dataset)
    paths = write_books(books, tmp_path / "books", formats=("csv",))
    as_of = ANCHOR + timedelta(hours=12)
    con = warehouse(tmp_path / "recon.duckdb")
    load_dataset(con, tmp_path, dataset, as_of)
    settings = settings_from(
        **{f"ledger_{k}": str(v[0]) for k, v in paths.items()},
        db=str(tmp_path / "recon.duckdb"),
        **SETTINGS[setting],
    )
    load_books(con, settings, RUN)
    params = _params(setting)
    expected = per_rule(ledger_links(dataset, books, params))
    got = per_rule(db_links(con))
    for rule in {r.name for r in load_rules()} - {"suggested_match", "manual"}:
        missed, extra = expected[rule] - got[rule], got[rule] - expected[rule]
        assert not missed, f"{rule}: recall < 100%, missed {sorted(missed)[:5]}"
        assert not extra, f"{rule}: precision < 100%, extra {sorted(extra)[:5]}"
    findings, _ = ledger_findings(con, RUN, as_of)
    score(findings, keys(ledger_truth(dataset, books, as_of=as_of, params=params)))
    # every planted case is matched by its rule when the settings allow it
    for case in books.cases:
        pairs = {(case["order"].strip(), p) for p in case["payments"]}
        if case["case"] in ("reference_case", "cart") or (
            case["case"] in ("reference_hash", "within_tolerance")
            and setting == "tolerance_and_pattern"
        ):
            assert pairs <= got[case["rule"]], case
        if case["case"] == "no_reference":
            assert ("ledger_suggested_match", "order", case["order"], "suggested") in findings
        if case["case"] == "tie":
            assert ("ledger_suggested_match", "order", case["order"], "ambiguous") in findings
        if case["case"] == "beyond_tolerance" and setting == "tolerance_and_pattern":
            assert not any(case["order"] == k for k, _ in got["amount_tolerance"]), case
    # every break says what differs, with both values, and the best candidate
    described = {
        r[0]: r[1:]
        for r in con.execute(
            "SELECT entity_id, differs, best_candidate FROM ledger_matches WHERE entity = 'order'"
        ).fetchall()
    }
    for case in books.cases:
        differs, best = described[case["order"]]
        if case["case"] == "beyond_tolerance" and setting != "bps":
            assert str(differs).startswith("amount: books "), (case, differs)
            assert ", provider " in str(differs)
        if case["case"] == "no_reference":
            assert best == case["payments"][0]
        if case["case"] == "tie":
            assert best == f"ambiguous: {case['payments'][0]}"
    con.close()
