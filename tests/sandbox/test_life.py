"""A sandbox that lives (issue 42, point 4): each night of `recon nightly --sandbox` moves on
from the last -- new payments, refunds, status changes, breaks fixed in the books and keyed
wrong again -- and `--sandbox-faults none` keeps it still."""

from __future__ import annotations

from pathlib import Path

import orjson

from recon.sandbox.config import SandboxConfig
from recon.sandbox.data import Dataset
from recon.sandbox.ledger.books import make_books
from recon.sandbox.life import life_of, live_books, next_day
from recon.sandbox.state import SandboxState

N = 2_000


def _served(state: SandboxState, resource: str) -> dict[str, dict[str, object]]:
    view = state.lists[resource]
    records = [orjson.loads(r) for r in view.page(0, view.total())]
    return {str(r["id"]): r for r in records}


def test_day_zero_is_the_generated_data_set() -> None:
    still = SandboxState(SandboxConfig(payments=N))
    assert len(_served(still, "payments")) == N
    assert life_of(still.data, 0).payments == []


def test_each_day_adds_payments_and_refunds_and_moves_statuses_on() -> None:
    day1 = SandboxState(SandboxConfig(payments=N, day=1))
    day2 = SandboxState(SandboxConfig(payments=N, day=2))
    pay1, pay2 = _served(day1, "payments"), _served(day2, "payments")
    assert N < len(pay1) < len(pay2)
    assert set(pay1) < set(pay2)  # yesterday's payments are still there
    newest = next(iter(pay2.values()))
    assert newest["id"] in set(pay2) - set(pay1)  # tonight's newest come first
    assert str(newest["createdAt"]) < day2.data.anchor.strftime("%Y-%m-%dT%H:%M:%S")  # past
    ref1, ref2 = _served(day1, "refunds"), _served(day2, "refunds")
    new_refunds = set(ref1) - set(_served(SandboxState(SandboxConfig(payments=N)), "refunds"))
    assert new_refunds
    assert set(ref1) < set(ref2)
    for rid in new_refunds:  # refunded in full on day 1: the status follows on day 2
        paid = str(ref1[rid]["paymentId"])
        assert pay1[paid]["status"] == "confirmed"
        assert pay2[paid]["status"] == "refunded"


def test_the_same_day_is_the_same_whenever_it_is_served() -> None:
    a = SandboxState(SandboxConfig(payments=N, day=3))
    b = SandboxState(SandboxConfig(payments=N, day=3))
    assert _served(a, "payments") == _served(b, "payments")
    assert _served(a, "refunds") == _served(b, "refunds")


def test_the_books_follow_the_days_fix_breaks_and_key_one_wrong_again() -> None:
    ds = Dataset(7, N)
    amounts = {"fixed": 123_456}

    def settled(reference: str) -> int | None:
        return amounts["fixed"]

    base = make_books(ds)
    before = {r["reference"]: r["amount_minor"] for r in base.orders}
    books = make_books(ds)
    live_books(ds, 3, books, settled)
    life = life_of(ds, 3, books)
    after = {r["reference"]: r["amount_minor"] for r in books.orders}
    assert {p["reference"] for p in life.payments} <= set(after)  # orders for new payments
    assert life.fixed
    assert life.rekeyed  # fixed on day 1, keyed wrong again on day 3
    for ref in life.fixed:
        if ref in life.rekeyed:
            assert after[ref] == before[ref]
        else:
            assert after[ref] == 123_456
    # a refund reaches the books the day after it came
    refund_ids = {r["refund_id"] for r in books.refunds}
    for rec in life.refunds:
        came = int(rec["metadata"]["sandboxDay"])  # type: ignore[index]
        assert (rec["id"] in refund_ids) == (came < 3)


def test_nights_count_on_and_none_keeps_the_sandbox_still(tmp_path: Path) -> None:
    assert next_day(tmp_path, 7, N, still=False) == 0  # the first night
    assert next_day(tmp_path, 7, N, still=False) == 1
    assert next_day(tmp_path, 7, N, still=False) == 2
    assert next_day(tmp_path, 7, N, still=True) == 2  # --sandbox-faults none
    assert next_day(tmp_path, 8, N, still=False) == 0  # another seed: another sandbox


def test_recon_sandbox_ledger_writes_the_books_of_a_day(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from recon.cli import app

    rows = {}
    for day in (0, 2):
        out = tmp_path / f"day{day}"
        result = CliRunner().invoke(
            app,
            ["sandbox", "ledger", "--out", str(out), "--payments", "400", "--day", str(day),
             "--format", "csv"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        rows[day] = len((out / "orders.csv").read_text().splitlines())
    assert rows[2] == rows[0] + 2 * len(life_of(Dataset(7, 400), 1).payments)
