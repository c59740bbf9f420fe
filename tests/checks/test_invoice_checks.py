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
    wh.invoice("in_today", due="2026-11-20")
    assert wh.evaluate("open_invoices") == {
        ("in_future", "not yet due"),
        ("in_today", "0-30"),
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
    future = wh.rows("open_invoices")[("in_future", "not yet due")]
    assert future["detail"] == "open, EUR 50.00 due, due date 2026-11-25 (in 5 days)"


def test_aging_bucket_is_one_macro(wh: Wh) -> None:
    wh.run("r1")
    wh.checks("r1", only=["open_invoices"])  # creates the reference objects
    got = wh.con.execute(
        "SELECT list(aging_bucket(d) ORDER BY d) FROM (VALUES (-400), (-1), (0), (30), (31), "
        "(60), (61), (90), (91), (4000)) AS t(d)"
    ).fetchone()
    expected = ["not yet due"] * 2 + ["0-30"] * 2 + ["31-60"] * 2 + ["61-90"] * 2 + ["90+"] * 2
    assert got == (expected,)
    assert wh.con.execute("SELECT aging_bucket(NULL)").fetchone() == (None,)


def _open_invoice_state(wh: Wh, run_id: str) -> list[tuple[str, str, str, str]]:
    return [
        tuple(r)
        for r in wh.con.execute(
            "SELECT entity_id, issue_type, state, first_seen_run FROM findings "
            "WHERE run_id = ? AND check_name = 'open_invoices' ORDER BY entity_id, state",
            [run_id],
        ).fetchall()
    ]


def test_an_invoice_moving_bucket_stays_the_same_open_finding(wh: Wh) -> None:
    wh.invoice("in_1", due="2026-10-25")  # 26 days overdue on night 0
    wh.run("n0", day=0)
    wh.checks("n0", only=["open_invoices"])
    assert _open_invoice_state(wh, "n0") == [("in_1", "0-30", "new", "n0")]
    wh.run("n1", day=10)  # 36 days overdue
    run = wh.checks("n1", only=["open_invoices"])["open_invoices"]
    assert _open_invoice_state(wh, "n1") == [("in_1", "31-60", "open", "n0")]
    assert (run.opening_count, run.new_count, run.resolved_count, run.closing_count) == (
        1,
        0,
        0,
        1,
    )


def test_findings_stored_under_the_old_key_are_carried_after_the_upgrade(wh: Wh) -> None:
    """A warehouse from before the change keyed open invoices by their bucket too
    (`open_invoices:<id>:<bucket>`); the first night after the upgrade must not resolve and
    reopen every open invoice."""
    wh.invoice("in_1", due="2026-10-25")
    wh.invoice("in_2", due="2026-11-10")
    wh.invoice("in_paid", due="2026-10-01")
    wh.run("old", day=-2)
    for iid, bucket in (("in_1", "0-30"), ("in_2", "0-30"), ("in_paid", "31-60")):
        wh.con.execute(
            "INSERT INTO findings (run_id, check_name, severity, finding_key, state, entity, "
            "entity_id, currency, amount_minor, issue_type, detail, first_seen_run) "
            "VALUES ('old', 'open_invoices', 'info', ?, 'new', 'invoice', ?, 'EUR', 5000, ?, "
            "'open', 'old')",
            [f"open_invoices:{iid}:{bucket}", iid, bucket],
        )
    wh.con.execute(
        "INSERT INTO check_runs (run_id, check_name, severity, status, finding_count, "
        "closing_count, new_count) VALUES ('old', 'open_invoices', 'info', 'failed', 3, 3, 3)"
    )
    wh.con.execute("UPDATE invoices SET status = 'paid' WHERE id = 'in_paid'")
    wh.run("r1", day=10)  # in_1 has moved to 31-60 since
    run = wh.checks("r1", only=["open_invoices"])["open_invoices"]
    assert _open_invoice_state(wh, "r1") == [
        ("in_1", "31-60", "open", "old"),
        ("in_2", "0-30", "open", "old"),
        ("in_paid", "31-60", "resolved", "old"),
    ]
    assert (run.opening_count, run.new_count, run.resolved_count, run.closing_count) == (
        3,
        0,
        1,
        2,
    )
    keys = {
        r[0]
        for r in wh.con.execute(
            "SELECT finding_key FROM findings WHERE run_id = 'r1' AND state <> 'resolved'"
        ).fetchall()
    }
    assert keys == {"open_invoices:in_1", "open_invoices:in_2"}


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
