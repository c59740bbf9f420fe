"""Checks 1-8: extraction completeness and payment status vs counted refunds."""

from __future__ import annotations

from .builder import Wh


def test_extraction_completeness_flags_incomplete_and_unavailable_scans(wh: Wh) -> None:
    wh.run("r1", scans={"refunds": ("incomplete", 1), "invoices": "unavailable"})
    wh.con.execute(
        "INSERT INTO resource_scans (run_id, resource, status) "
        "VALUES ('r1', 'payment_methods', 'skipped')"
    )
    assert wh.evaluate("extraction_completeness") == {
        ("refunds", "incomplete"),
        ("invoices", "unavailable"),
    }
    rows = wh.rows("extraction_completeness")
    assert rows[("refunds", "incomplete")]["detail"] == "refunds incomplete (1 page failed)"
    assert rows[("refunds", "incomplete")]["amount_minor"] is None


def test_extraction_completeness_passes_when_every_scan_is_complete(wh: Wh) -> None:
    wh.run("r1")
    assert wh.evaluate("extraction_completeness") == set()
    assert wh.checks("r1", only=["extraction_completeness"])["extraction_completeness"].status == (
        "passed"
    )


def _refund_fixture(wh: Wh) -> None:
    # refunded, exactly covered: 1500 succeeded + 500 pending; a failed one is not counted
    wh.payment("pay_ok", 2000, status="refunded")
    wh.refund("re_ok1", "pay_ok", 1500)
    wh.refund("re_ok2", "pay_ok", 500, status="pending")
    wh.refund("re_ok3", "pay_ok", 999, status="FAILED")
    # refunded but short: 1234 counted of 2000 (500 in flight); other-currency refund not added
    wh.payment("pay_short", 2000, status="refunded")
    wh.refund("re_s1", "pay_short", 734)
    wh.refund("re_s2", "pay_short", 500, status="pending")
    wh.refund("re_s3", "pay_short", 766, currency="USD")
    wh.refund("re_s4", "pay_short", 766, gone="r1")
    # refunded and over
    wh.payment("pay_over", 1000, status="refunded")
    wh.refund("re_o1", "pay_over", 700)
    wh.refund("re_o2", "pay_over", 700, status="reversed")
    wh.refund("re_o3", "pay_over", 400)
    # refunded with nothing counted
    wh.payment("pay_none", 800, status="refunded")
    wh.refund("re_n1", "pay_none", 800, status="cancelled")
    # gone payment: not live, never flagged by 2-5
    wh.payment("pay_gone", 1000, status="refunded", gone="r1")


def test_refunded_amount_mismatch(wh: Wh) -> None:
    _refund_fixture(wh)
    assert wh.evaluate("refunded_amount_mismatch") == {
        ("pay_short", "refunded_short"),
        ("pay_over", "refunded_over"),
        ("pay_none", "refunded_short"),
    }
    rows = wh.rows("refunded_amount_mismatch")
    short = rows[("pay_short", "refunded_short")]
    assert short["amount_minor"] == 766
    assert short["currency"] == "EUR"
    assert short["detail"] == (
        "refunded EUR 12.34 of EUR 20.00 (in flight: EUR 5.00; 2 counted refunds)"
    )
    assert rows[("pay_over", "refunded_over")]["amount_minor"] == 100
    assert rows[("pay_none", "refunded_short")]["amount_minor"] == 800


def test_refunded_amount_mismatch_uses_the_failed_statuses_parameter(wh: Wh) -> None:
    from recon.checks import CheckParams

    wh.payment("pay_1", 1000, status="refunded")
    wh.refund("re_1", "pay_1", 1000, status="on_hold")
    assert wh.evaluate("refunded_amount_mismatch") == set()
    wh.con.execute("DELETE FROM check_runs; DELETE FROM findings")
    params = CheckParams(failed_statuses=("failed", "on_hold"))
    assert wh.evaluate("refunded_amount_mismatch", params=params) == {("pay_1", "refunded_short")}


def test_partially_refunded_out_of_range(wh: Wh) -> None:
    wh.payment("pay_in", 1000, status="partially_refunded")
    wh.refund("re_in", "pay_in", 999)
    wh.payment("pay_zero", 1000, status="partially_refunded")
    wh.refund("re_zero", "pay_zero", 400, status="rejected")
    wh.payment("pay_full", 1000, status="partially_refunded")
    wh.refund("re_full1", "pay_full", 600)
    wh.refund("re_full2", "pay_full", 400, status="pending", created_days_ago=3)
    wh.payment("pay_over", 1000, status="partially_refunded")
    wh.refund("re_over", "pay_over", 1300)
    wh.payment("pay_min", 1000, status="partially_refunded")
    wh.refund("re_min", "pay_min", 1)
    assert wh.evaluate("partially_refunded_out_of_range") == {
        ("pay_zero", "partial_without_refund"),
        ("pay_full", "partial_but_full"),
        ("pay_over", "partial_over"),
    }
    rows = wh.rows("partially_refunded_out_of_range")
    assert rows[("pay_zero", "partial_without_refund")]["amount_minor"] == 1000
    assert rows[("pay_full", "partial_but_full")]["amount_minor"] == 0
    assert rows[("pay_over", "partial_over")]["amount_minor"] == 300


def test_confirmed_with_refunds(wh: Wh) -> None:
    wh.payment("pay_c1", 1000, status="confirmed")
    wh.refund("re_c1", "pay_c1", 250, status="pending", created_days_ago=3)
    wh.payment("pay_c2", 1000, status="confirmed")
    wh.refund("re_c2", "pay_c2", 250, status="failed")
    wh.payment("pay_c3", 1000, status="confirmed")
    wh.refund("re_c3", "pay_c3", 250, currency="GBP")
    assert wh.evaluate("confirmed_with_refunds") == {("pay_c1", "confirmed_with_refunds")}
    row = wh.rows("confirmed_with_refunds")[("pay_c1", "confirmed_with_refunds")]
    assert row["amount_minor"] == 250
    assert "in flight: EUR 2.50" in row["detail"]


def test_over_refunded_any_status(wh: Wh) -> None:
    _refund_fixture(wh)
    wh.payment("pay_conf", 500, status="confirmed")
    wh.refund("re_conf", "pay_conf", 501)
    wh.payment("pay_jpy", 1000, "JPY", status="partially_refunded")
    wh.refund("re_jpy", "pay_jpy", 1000, "JPY")
    assert wh.evaluate("over_refunded") == {
        ("pay_over", "over_refunded"),
        ("pay_conf", "over_refunded"),
    }
    assert wh.rows("over_refunded")[("pay_over", "over_refunded")]["amount_minor"] == 100


def test_refund_currency_mismatch(wh: Wh) -> None:
    wh.payment("pay_1", 1000, "EUR")
    wh.refund("re_usd", "pay_1", 100, "USD")
    wh.refund("re_usd_failed", "pay_1", 100, "USD", status="canceled")
    wh.refund("re_eur", "pay_1", 100, "EUR")
    wh.refund("re_orphan", "pay_missing", 100, "USD")
    wh.payment("pay_bhd", 1000, "BHD")
    wh.refund("re_bhd", "pay_bhd", 1234, "EUR")
    assert wh.evaluate("refund_currency_mismatch") == {
        ("re_usd", "currency_mismatch"),
        ("re_bhd", "currency_mismatch"),
    }
    row = wh.rows("refund_currency_mismatch")[("re_bhd", "currency_mismatch")]
    assert (row["entity"], row["currency"], row["amount_minor"]) == ("refund", "EUR", 1234)
    assert row["detail"] == "refund of EUR 12.34 on payment pay_bhd of BHD 1.000"


def test_refund_unknown_payment(wh: Wh) -> None:
    wh.payment("pay_1", 1000)
    wh.payment("pay_gone", 1000, gone="r1")
    wh.refund("re_ok", "pay_1", 100)
    wh.refund("re_missing", "pay_missing", 100)
    wh.refund("re_gone", "pay_gone", 100, status="pending")
    wh.refund("re_null", None, 100)
    wh.refund("re_failed", "pay_missing", 100, status="failed")
    wh.refund("re_dead", "pay_missing", 100, gone="r1")
    assert wh.evaluate("refund_unknown_payment") == {
        ("re_missing", "unknown_payment"),
        ("re_gone", "unknown_payment"),
        ("re_null", "unknown_payment"),
    }
    rows = wh.rows("refund_unknown_payment")
    assert rows[("re_gone", "unknown_payment")]["detail"] == (
        "refund of EUR 1.00 of payment pay_gone, which vanished in run r1"
    )
    assert rows[("re_null", "unknown_payment")]["detail"] == "refund of EUR 1.00 has no payment id"


def test_refund_on_unrefundable_payment(wh: Wh) -> None:
    for status in ("created", "pending", "cancelled", "expired", "confirmed", "refunded"):
        wh.payment(f"pay_{status}", 1000, status=status)
        wh.refund(f"re_{status}", f"pay_{status}", 100)
    wh.payment("pay_x", 1000, status="expired")
    wh.refund("re_x", "pay_x", 100, status="rejected")
    assert wh.evaluate("refund_on_unrefundable_payment") == {
        ("re_created", "unrefundable_payment_state"),
        ("re_pending", "unrefundable_payment_state"),
        ("re_cancelled", "unrefundable_payment_state"),
        ("re_expired", "unrefundable_payment_state"),
    }
