"""The generated data: deterministic, any size, in the documented shapes."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import orjson
import pytest

from recon.sandbox.data import LIST_RESOURCES, Dataset
from recon.sandbox.records.payments import Payments

from .sandbox_support import ANCHOR

ISO_CODES = {"EUR", "USD", "GBP", "JPY", "BHD"}


@pytest.fixture(scope="module")
def ds() -> Dataset:
    return Dataset(7, 2000, ANCHOR)


def test_same_seed_same_bytes_other_seed_differs() -> None:
    a = Dataset(3, 500, ANCHOR)
    b = Dataset(3, 500, ANCHOR)
    c = Dataset(4, 500, ANCHOR)
    for res in LIST_RESOURCES:
        n = a.count(res)
        assert a.records_bytes(res, 0, n) == b.records_bytes(res, 0, n)
    assert a.records_bytes("payments", 0, 50) != c.records_bytes("payments", 0, 50)


def test_ids_round_trip_and_are_unique(ds: Dataset) -> None:
    ids = [ds.payment_id(i) for i in range(ds.n)]
    assert len(set(ids)) == ds.n
    assert all(i.startswith("pay_") and len(i) == 17 for i in ids)
    for i in (0, 1, 999, ds.n - 1):
        assert ds.index_of("pay", ds.payment_id(i), ds.n) == i
    assert ds.index_of("pay", "pay_nope", ds.n) is None
    assert ds.index_of("pay", ds.make_id("pay", ds.n + 5), ds.n) is None
    assert ds.index_of("sub", ds.payment_id(0), ds.n) is None


def test_proportions(ds: Dataset) -> None:
    n = ds.n
    assert 0.18 * n <= ds.refund_count <= 0.36 * n
    assert ds.count("disputes") == n // 50
    assert ds.count("subscriptions") == n // 10
    assert ds.count("invoices") == n * 3 // 10
    assert ds.count("payment_intents") == n // 2


def test_refund_count_matches_plans(ds: Dataset) -> None:
    for i in range(ds.n):
        assert ds.refund_count_of(i) == len(ds.payment_plan(i).refunds)
        assert ds.payment_status(i) == ds.payment_plan(i).status


def test_shapes_and_order(ds: Dataset) -> None:
    pays = [orjson.loads(b) for b in ds.records_bytes("payments", 0, ds.n)]
    keys = {"id", "amountMinor", "currency", "status", "reference", "createdAt", "customer"}
    assert all(keys <= p.keys() for p in pays)
    assert all("card" in p or "bankAccount" in p for p in pays)
    created = [p["createdAt"] for p in pays]
    assert created == sorted(created, reverse=True)
    currencies = Counter(p["currency"] for p in pays)
    assert {"EUR", "USD", "GBP", "JPY", "BHD"} <= set(currencies)
    refunds = [orjson.loads(b) for b in ds.records_bytes("refunds", 0, ds.refund_count)]
    assert len({r["id"] for r in refunds}) == len(refunds)
    assert [r["createdAt"] for r in refunds] == sorted(
        (r["createdAt"] for r in refunds), reverse=True
    )
    assert all(set(r["amount"]) == {"amountMinor", "currency"} for r in refunds)
    inv = [orjson.loads(b) for b in ds.records_bytes("invoices", 0, ds.count("invoices"))]
    assert any("dueDate" in v for v in inv)
    assert any(v["status"] == "open" and "dueDate" not in v for v in inv)
    intents = [orjson.loads(b) for b in ds.records_bytes("payment_intents", 0, 100)]
    assert {"status", "captureMethod", "amount", "currency"} <= intents[0].keys()
    disputes = [orjson.loads(b) for b in ds.records_bytes("disputes", 0, ds.count("disputes"))]
    assert any("paymentId" in d for d in disputes)
    assert any("paymentId" not in d for d in disputes)


def test_refund_slices_match_full_list(ds: Dataset) -> None:
    full = ds.records_bytes("refunds", 0, ds.refund_count)
    for start, stop in ((0, 7), (3, 250), (101, 102), (ds.refund_count - 3, ds.refund_count)):
        assert ds.records_bytes("refunds", start, stop) == full[start:stop]


def test_clean_non_final_records_are_recent(ds: Dataset) -> None:
    day_ago = ds.anchor_ms - 86_400_000
    for i in range(ds.n):
        if i in ds.pay_kind:
            continue
        if ds.payment_status(i) in ("created", "pending"):
            assert ds.created_ms("payments", i) > day_ago


def test_clean_data_has_only_known_values() -> None:
    clean = Dataset(11, 1000, ANCHOR, anomalies=False)
    # Informational findings only: open invoices, and refunds still in flight (issue 15).
    informational = ("open_invoices", "refund_in_flight")
    assert clean.planted() == [p for p in clean.planted() if p.check in informational]
    for b in clean.records_bytes("payments", 0, 1000):
        p = orjson.loads(b)
        assert isinstance(p["amountMinor"], int)
        assert p["amountMinor"] > 0
        assert p["currency"] in ISO_CODES


def test_anchor_defaults_to_today_midnight_utc() -> None:
    ds = Dataset(1, 10)
    assert (ds.anchor.hour, ds.anchor.minute, ds.anchor.second) == (0, 0, 0)
    assert ds.anchor.date() == datetime.now(ds.anchor.tzinfo).date()


def test_large_sets_generate_nothing_up_front(monkeypatch: pytest.MonkeyPatch) -> None:
    """One million payments: only the records a page asks for are ever generated."""
    made: list[int] = []
    original = Payments.record_bytes

    def counting(self: Payments, i: int) -> bytes:
        made.append(i)
        return original(self, i)

    monkeypatch.setattr(Payments, "record_bytes", counting)
    big = Dataset(7, 1_000_000, ANCHOR)
    assert made == []
    page = big.records_bytes("payments", 500_000, 500_200)
    assert len(page) == 200
    assert made == list(range(500_000, 500_200))
