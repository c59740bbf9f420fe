"""The roll-forward on the sandbox: five nights (28 Sep to 3 Nov 2026, run dates faked),
each loaded by recon's own loader and judged by the real checks, with breaks planted that
open and resolve inside the period and across both of its boundaries. Every figure ties,
each planted break lands in the column it should, and provider activity equals a direct
computation from the records as the last October night saw them."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from recon.checks import CheckParams, run_checks
from recon.close import compute_period, parse_period
from recon.sandbox.data import Dataset
from tests.ledger.support import RESOURCES, land_and_load, warehouse

NIGHTS = {
    "20260928T020000Z-000001": datetime(2026, 9, 28, 2, tzinfo=UTC),
    "20261005T020000Z-000002": datetime(2026, 10, 5, 2, tzinfo=UTC),
    "20261019T020000Z-000003": datetime(2026, 10, 19, 2, tzinfo=UTC),
    "20261030T020000Z-000004": datetime(2026, 10, 30, 2, tzinfo=UTC),
    "20261103T020000Z-000005": datetime(2026, 11, 3, 2, tzinfo=UTC),
}
S28, O05, O19, O30, N03 = NIGHTS
# planted break -> the nights whose payment carries a negative amount
PLANTED = {
    "W": {S28, O05},  # open at the start, resolved inside
    "Y": {S28, O05, O19, O30, N03},  # open throughout
    "X": {O05, O19},  # opens and resolves inside
    "Z": {O30, N03},  # opens inside, open at the end
    "V": {N03},  # after the period
    "Q": {S28, O19},  # resolves, reopens, resolves
}
SHIFT = timedelta(days=45)  # the sandbox's records are from late November: move them back


def _shifted(record: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(record)
    for key in ("createdAt", "created_at"):
        if isinstance(out.get(key), str):
            when = datetime.fromisoformat(out[key].replace("Z", "+00:00")) - SHIFT
            out[key] = when.isoformat().replace("+00:00", "Z")
    return out


def _night(
    base: dict[str, list[dict[str, Any]]], chosen: dict[str, str], run_id: str
) -> dict[str, list[dict[str, Any]]]:
    records = {r: [copy.deepcopy(x) for x in xs] for r, xs in base.items()}
    for label, pay_id in chosen.items():
        if run_id in PLANTED[label]:
            payment = next(p for p in records["payments"] if p["id"] == pay_id)
            payment["amountMinor"] = -abs(int(payment["amountMinor"]))
    return records


@pytest.fixture(scope="module")
def sandbox(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, str], dict[str, Any]]:
    folder = tmp_path_factory.mktemp("close_sandbox")
    data = Dataset(7, 300)
    base = {r: [_shifted(x) for x in data.iter_records(r)] for r in RESOURCES}
    clean = [
        p
        for p in base["payments"]
        if isinstance(p.get("amountMinor"), int) and p["amountMinor"] > 0
    ]
    chosen = {label: clean[i]["id"] for i, label in enumerate(sorted(PLANTED))}
    db = folder / "recon.duckdb"
    con = warehouse(db)
    seen: dict[str, Any] = {}
    for run_id, started in NIGHTS.items():
        records = _night(base, chosen, run_id)
        land_and_load(con, folder, run_id, started, records)
        for run in run_checks(con, run_id=run_id, as_of=started, params=CheckParams()):
            assert run.status != "errored", (run.check_name, run.reason)
        seen[run_id] = records
    con.close()
    return db, chosen, seen


def _items(fig: Any, entity_id: str) -> list[dict[str, Any]]:
    keys = fig.rollforward_items.to_pylist()
    return [
        i for i in keys
        if i["finding_key"].startswith("impossible_amounts:")
        and f":{entity_id}:" in i["finding_key"]
    ]  # fmt: skip


def _sum(rows: Iterable[dict[str, Any]], col: str) -> int:
    return sum(int(r[col]) for r in rows)


def test_the_roll_forward_ties_over_sandbox_nights(
    sandbox: tuple[Path, dict[str, str], dict[str, Any]],
) -> None:
    db, chosen, _ = sandbox
    con = duckdb.connect(str(db), read_only=True)
    try:
        fig = compute_period(con, parse_period("2026-10"), db.with_name("none.jsonl"))
        opening = con.execute(
            "SELECT currency, count(*), sum(coalesce(amount_minor, 0))::BIGINT FROM findings "
            "WHERE run_id = ? AND state IN ('new', 'open', 'reopened') GROUP BY ALL",
            [S28],
        ).fetchall()
        closing = con.execute(
            "SELECT currency, count(*), sum(coalesce(amount_minor, 0))::BIGINT FROM findings "
            "WHERE run_id = ? AND state IN ('new', 'open', 'reopened') GROUP BY ALL",
            [O30],
        ).fetchall()
    finally:
        con.close()
    rows = fig.rollforward.to_pylist()
    assert len(rows) > 3
    assert all(r["ties"] for r in rows), [r for r in rows if not r["ties"]]
    for r in rows:
        assert (
            r["open_start_minor"] + r["new_minor"] - r["resolved_minor"] + r["change_minor"]
            == r["open_end_minor"]
        )
        assert r["open_start_count"] + r["new_count"] - r["resolved_count"] == r["open_end_count"]
    by_cur: dict[str | None, list[int]] = {}
    for r in rows:
        acc = by_cur.setdefault(r["currency"], [0, 0, 0, 0])
        acc[0] += r["open_start_count"]
        acc[1] += r["open_start_minor"]
        acc[2] += r["open_end_count"]
        acc[3] += r["open_end_minor"]
    assert {c: (a[0], a[1]) for c, a in by_cur.items() if a[0]} == {
        c: (n, s) for c, n, s in opening
    }
    assert {c: (a[2], a[3]) for c, a in by_cur.items() if a[2]} == {
        c: (n, s) for c, n, s in closing
    }
    movement = {
        label: tuple(
            _sum(_items(fig, pay), c)
            for c in ("open_start_count", "new_count", "resolved_count", "open_end_count")
        )
        for label, pay in chosen.items()
    }
    assert movement == {
        "W": (1, 0, 1, 0),
        "Y": (1, 0, 0, 1),
        "X": (0, 1, 1, 0),
        "Z": (0, 1, 0, 1),
        "V": (0, 0, 0, 0),
        "Q": (1, 1, 2, 0),
    }
    resolved_keys = set(fig.resolved_items.column("finding_key").to_pylist())
    assert {
        label for label, pay in chosen.items() if any(f":{pay}:" in k for k in resolved_keys)
    } == {"W", "X", "Q"}


def test_provider_activity_equals_the_records_the_last_night_saw(
    sandbox: tuple[Path, dict[str, str], dict[str, Any]],
) -> None:
    db, _, seen = sandbox
    con = duckdb.connect(str(db), read_only=True)
    try:
        fig = compute_period(con, parse_period("2026-10"), db.with_name("none.jsonl"))
    finally:
        con.close()
    start, end = datetime(2026, 10, 1, tzinfo=UTC), datetime(2026, 11, 1, tzinfo=UTC)

    def inside(x: dict[str, Any]) -> bool:
        when = datetime.fromisoformat(str(x["createdAt"]).replace("Z", "+00:00"))
        return start <= when < end

    expected: dict[str, int] = {}
    for p in seen[O30]["payments"]:
        if (
            inside(p)
            and p.get("status") in ("confirmed", "partially_refunded", "refunded")
            and isinstance(p.get("amountMinor"), int)
        ):
            cur = str(p["currency"]).upper()
            expected[cur] = expected.get(cur, 0) + p["amountMinor"]
    got = {
        r["currency"]: r["settled_minor"] for r in fig.provider.to_pylist() if r["settled_minor"]
    }
    assert expected
    assert got == {c: v for c, v in expected.items() if v}
