"""Checks 9-13: open invoices, disputes on refunded payments, duplicate references."""

from __future__ import annotations

from .builder import Wh


def test_open_invoices_aging_buckets_from_due_date(wh: Wh) -> None:
    # as_of = 2026-11-20 02:00 UTC
    wh.invoice("in_future", due="2026-11-25")
    wh.invoice("in_30", due="2026-10-21")
    wh.invoice("in_31", due="2026-10-20")
    wh.invoice("in_60", due="2026-09-21")
    wh.invoice("in_61", due="2026-09-20")
    wh.invoice("in_90", due="2026-08-22")
    wh.invoice("in_91", due="2026-08-21")
    wh.invoice("in_paid", status="paid", due="2026-01-01")
    wh.invoice("in_gone", due="2026-01-01", gone="r1")
    assert wh.evaluate("open_invoices") == {
        ("in_future", "0-30"),
        ("in_30", "0-30"),
        ("in_31", "31-60"),
        ("in_60", "31-60"),
        ("in_61", "61-90"),
        ("in_90", "61-90"),
        ("in_91", "90+"),
    }
    row = wh.rows("open_invoices")[("in_31", "31-60")]
    assert (row["severity"], row["amount_minor"], row["currency"]) == ("info", 5000, "EUR")
    assert row["detail"] == "open, EUR 50.00 due, due date 2026-10-20 (31 days ago)"


def test_open_invoices_without_due_date_age_from_first_seen_open(wh: Wh) -> None:
    wh.run("r0", day=-45)
    wh.run("r1")
    wh.invoice("in_new")  # first seen tonight
    wh.invoice("in_old", first_seen="r0")  # no version history: first seen 45 days ago
    wh.invoice("in_reopened", first_seen="r0")
    wh.version("invoices", "in_reopened", 1, "r0", "new", "draft")
    wh.version("invoices", "in_reopened", 2, "r1", "changed", "open")
    assert wh.evaluate("open_invoices") == {
        ("in_new", "0-30"),
        ("in_old", "31-60"),
        ("in_reopened", "0-30"),
    }


def test_open_invoice_inactive_subscription(wh: Wh) -> None:
    wh.invoice("in_lapsed", customer="cus_lapsed")
    wh.subscription("sub_l1", "cus_lapsed", "canceled")
    wh.subscription("sub_l2", "cus_lapsed", "past_due")
    wh.subscription("sub_l3", "cus_lapsed", "active", gone="r1")
    wh.invoice("in_active", customer="cus_active")
    wh.subscription("sub_a1", "cus_active", "canceled")
    wh.subscription("sub_a2", "cus_active", "active")
    wh.invoice("in_nosub", customer="cus_nosub")
    wh.invoice("in_paid", customer="cus_lapsed", status="paid")
    assert wh.evaluate("open_invoice_inactive_subscription") == {
        ("in_lapsed", "inactive_subscription")
    }
    row = wh.rows("open_invoice_inactive_subscription")[("in_lapsed", "inactive_subscription")]
    assert row["detail"] == (
        "open invoice of EUR 50.00 for customer cus_lapsed, whose 2 subscription(s) are "
        "canceled, past_due"
    )


def test_open_invoice_nonpositive_amount(wh: Wh) -> None:
    wh.invoice("in_zero", 0)
    wh.invoice("in_neg", -5, "JPY")
    wh.invoice("in_pos", 1)
    wh.invoice("in_paid_zero", 0, status="paid")
    wh.invoice("in_text", "12")  # non-integer: impossible_amounts' business
    assert wh.evaluate("open_invoice_nonpositive_amount") == {
        ("in_zero", "nonpositive_amount_due"),
        ("in_neg", "nonpositive_amount_due"),
    }
    assert (
        wh.rows("open_invoice_nonpositive_amount")[("in_neg", "nonpositive_amount_due")]["detail"]
        == "open invoice with amount due JPY -5"
    )


def test_dispute_on_refunded_payment_not_evaluated_without_payment_references(wh: Wh) -> None:
    wh.run("r1")
    wh.payment("pay_1", status="refunded")
    wh.dispute("dp_1", None)
    run = wh.checks("r1", only=["dispute_on_refunded_payment"])["dispute_on_refunded_payment"]
    assert (run.status, run.reason) == ("not_evaluated", "no dispute carries a payment reference")


def test_dispute_on_refunded_payment(wh: Wh) -> None:
    wh.payment("pay_r", status="refunded")
    wh.payment("pay_p", status="partially_refunded")
    wh.payment("pay_c", status="confirmed")
    wh.payment("pay_gone", status="refunded", gone="r1")
    wh.dispute("dp_r", "pay_r", 700, "USD")
    wh.dispute("dp_p", "pay_p")
    wh.dispute("dp_c", "pay_c")
    wh.dispute("dp_gone", "pay_gone")
    wh.dispute("dp_none", None)
    wh.dispute("dp_unknown", "pay_nowhere")
    assert wh.evaluate("dispute_on_refunded_payment") == {
        ("dp_r", "dispute_on_refunded_payment"),
        ("dp_p", "dispute_on_refunded_payment"),
    }
    row = wh.rows("dispute_on_refunded_payment")[("dp_r", "dispute_on_refunded_payment")]
    assert (row["entity"], row["currency"], row["amount_minor"]) == ("dispute", "USD", 700)


def test_duplicate_payment_reference(wh: Wh) -> None:
    wh.payment("pay_a", reference="ORD-1")
    wh.payment("pay_b", reference="ORD-1")
    wh.payment("pay_c", reference="ORD-2")
    wh.payment("pay_d", reference="ORD-2", gone="r1")
    wh.payment("pay_e", reference="")
    wh.payment("pay_f", reference="")
    wh.payment("pay_g")
    wh.payment("pay_h")
    wh.payment("pay_i", reference="ord-1")
    assert wh.evaluate("duplicate_payment_reference") == {
        ("pay_a", "duplicate_reference"),
        ("pay_b", "duplicate_reference"),
    }
    assert wh.rows("duplicate_payment_reference")[("pay_a", "duplicate_reference")]["detail"] == (
        "reference ORD-1 is shared by 2 live payments (pay_a, pay_b)"
    )
