"""The truth oracle: planted anomalies are found, the rules hold, output is deterministic."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from typing import Any

import pytest

from recon.sandbox.data import Dataset
from recon.sandbox.truth import compute_findings, truth, truth_json

from .sandbox_support import ANCHOR

AS_OF = ANCHOR + timedelta(hours=12)


def _key(f: dict[str, Any]) -> tuple[str, str, str, str]:
    return (f["check"], f["entity"], f["entity_id"], f["issue_type"])


@pytest.mark.parametrize(
    ("seed", "n"), [(7, 200), (1, 1000), pytest.param(42, 5000, marks=pytest.mark.slow)]
)
def test_every_planted_anomaly_is_a_finding(seed: int, n: int) -> None:
    t = truth(Dataset(seed, n, ANCHOR))
    findings = {_key(f) for f in t["findings"]}
    planted = {_key(p) for p in t["planted"]}
    assert planted <= findings
    # nothing fires by accident: every finding was planted on purpose
    assert findings == planted
    kinds = {p["kind"] for p in t["planted"]}
    checks = {f["check"] for f in t["findings"]}
    assert len(checks) == 17  # checks 2-17 and 21
    assert {"refunded_short", "partial_but_full", "partial_without_refund", "open_invoice"} <= kinds
    # issue 15: case and spelling, in-flight refunds
    assert {"refunded_mixed_case", "young_pending_refund"} <= kinds
    ds = Dataset(seed, n, ANCHOR)
    lower = [i for i, kind in ds.pay_kind.items() if kind == "currency_lower_case"]
    assert len(lower) == ds.per_kind
    for i in lower:  # `eur` on the payment, `Eur` on its refund: read as EUR, no finding
        payment = ds.payment(i)
        (refund,) = ds.refunds_of(i)
        assert payment["currency"] == payment["currency"].lower()
        assert refund["amount"]["currency"] == payment["currency"].capitalize()
        assert not {f[2] for f in findings} & {payment["id"], refund["id"]}


def test_at_least_a_couple_of_each_kind_even_for_small_sets() -> None:
    t = truth(Dataset(7, 200, ANCHOR))
    per_kind: dict[str, int] = {}
    for p in t["planted"]:
        per_kind[p["kind"]] = per_kind.get(p["kind"], 0) + 1
    assert min(per_kind.values()) >= 2, per_kind
    buckets = {p["issue_type"] for p in t["planted"] if p["check"] == "open_invoices"}
    assert buckets <= {"not yet due", "0-30", "31-60", "61-90", "90+"}


def test_open_invoice_buckets_cover_all_ages() -> None:
    t = truth(Dataset(7, 5000, ANCHOR))
    buckets = {f["issue_type"] for f in t["findings"] if f["check"] == "open_invoices"}
    assert buckets == {"not yet due", "0-30", "31-60", "61-90", "90+"}


def test_truth_is_deterministic() -> None:
    a = truth_json(Dataset(5, 600, ANCHOR))
    b = truth_json(Dataset(5, 600, ANCHOR))
    c = truth_json(Dataset(6, 600, ANCHOR))
    assert a == b
    assert a != c


@pytest.mark.slow  # `recon sandbox truth` in a new process
def test_truth_command_prints_the_same_json() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "recon",
            "sandbox",
            "truth",
            "--seed",
            "5",
            "--payments",
            "300",
            "--anchor",
            "2026-11-20T00:00:00Z",
        ],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    assert out == truth_json(Dataset(5, 300, ANCHOR))


def _pay(pid: str, status: str, amount: Any = 1000, cur: str = "EUR", **kw: Any) -> dict[str, Any]:
    return {
        "id": pid,
        "amountMinor": amount,
        "currency": cur,
        "status": status,
        "reference": kw.get("reference", pid),
        "createdAt": kw.get("createdAt", "2026-11-19T12:00:00Z"),
    }


def _ref(
    rid: str, pid: str, amount: Any, status: str = "succeeded", cur: str = "EUR"
) -> dict[str, Any]:
    return {
        "id": rid,
        "paymentId": pid,
        "amount": {"amountMinor": amount, "currency": cur},
        "status": status,
        "createdAt": "2026-11-19T13:00:00Z",
    }


def _run(**records: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
    return {_key(f) for f in compute_findings(records, as_of=AS_OF)}


def test_rules_on_hand_made_records() -> None:
    got = _run(
        payments=[
            _pay("p1", "refunded"),
            _pay("p2", "partially_refunded"),
            _pay("p3", "confirmed"),
            _pay("p4", "cancelled"),
            _pay("p5", "refunded"),
            _pay("p6", "pending", createdAt="2026-11-01T00:00:00Z"),
            _pay("p7", "Confirmed"),
        ],
        refunds=[
            _ref("r1", "p1", 600),
            _ref("r2", "p1", 400, status="failed"),  # not counted
            _ref("r3", "p2", 1000),
            _ref("r4", "p3", 10, status="pending"),
            _ref("r5", "p4", 10),
            _ref("r6", "p5", 1000),
            _ref("r7", "p5", 5, cur="USD"),  # not added to p5's total
            _ref("r8", "nope", 5),
            # pending for 19 days: older than the 48 h grace, so counted and judged
            {
                **_ref("r9", "p7", 10, status="PENDING", cur="eur"),
                "createdAt": "2026-11-01T00:00:00Z",
            },
        ],
    )
    assert ("refunded_amount_mismatch", "payment", "p1", "refunded_short") in got
    assert ("partially_refunded_out_of_range", "payment", "p2", "partial_but_full") in got
    # r4 is pending and 23 h old: in flight, not a break (RECON_REFUND_GRACE_HOURS)
    assert ("confirmed_with_refunds", "payment", "p3", "confirmed_with_refunds") not in got
    assert ("refund_in_flight", "payment", "p3", "refund_in_flight") in got
    # codes are compared as the loader normalises them ('Confirmed', 'PENDING', 'eur')
    assert ("confirmed_with_refunds", "payment", "p7", "confirmed_with_refunds") in got
    assert ("refund_on_unrefundable_payment", "refund", "r5", "unrefundable_payment_state") in got
    assert ("refund_currency_mismatch", "refund", "r7", "currency_mismatch") in got
    assert ("refund_unknown_payment", "refund", "r8", "unknown_payment") in got
    assert ("stuck_non_final", "payment", "p6", "stuck_pending") in got
    assert not any(k[2] == "p5" for k in got)
    assert not any(k[2] == "r2" for k in got)


def test_non_integer_amounts_are_null_and_never_compare() -> None:
    got = _run(
        payments=[_pay("p1", "refunded", amount="1000"), _pay("p2", "partially_refunded", 12.5)],
        refunds=[_ref("r1", "p1", 5), _ref("r2", "p2", 5)],
    )
    assert got == {
        ("impossible_amounts", "payment", "p1", "non_integer_amount"),
        ("impossible_amounts", "payment", "p2", "non_integer_amount"),
    }


def test_invoice_rules() -> None:
    inv = [
        {
            "id": "i1",
            "customerId": "c1",
            "status": "open",
            "amountDue": {"amountMinor": 0, "currency": "EUR"},
            "dueDate": "2026-10-01",
        },
        {
            "id": "i2",
            "customerId": "c2",
            "status": "open",
            "amountDue": {"amountMinor": 5, "currency": "EUR"},
        },
        {
            "id": "i3",
            "customerId": "c3",
            "status": "open",
            "amountDue": {"amountMinor": 5, "currency": "EUR"},
            "dueDate": "2026-12-01",
        },
        {
            "id": "i4",
            "customerId": "c1",
            "status": "paid",
            "amountDue": {"amountMinor": 5, "currency": "EUR"},
        },
    ]
    subs = [
        {"id": "s1", "customerId": "c1", "priceId": "x", "status": "canceled"},
        {"id": "s2", "customerId": "c3", "priceId": "x", "status": "canceled"},
        {"id": "s3", "customerId": "c3", "priceId": "x", "status": "active"},
    ]
    got = _run(invoices=inv, subscriptions=subs)
    assert got == {
        ("open_invoices", "invoice", "i1", "31-60"),
        ("open_invoices", "invoice", "i2", "0-30"),
        ("open_invoices", "invoice", "i3", "not yet due"),
        ("open_invoice_inactive_subscription", "invoice", "i1", "inactive_subscription"),
        ("open_invoice_nonpositive_amount", "invoice", "i1", "nonpositive_amount_due"),
    }
