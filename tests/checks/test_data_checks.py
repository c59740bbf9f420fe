"""Checks 14-20: impossible amounts, unknown statuses, stuck records, history, volume."""

from __future__ import annotations

from recon.checks import CheckParams

from .builder import Wh


def test_impossible_amounts(wh: Wh) -> None:
    wh.payment("pay_ok", 1000)
    wh.payment("pay_neg", -1)
    wh.payment("pay_float", 12.5)
    wh.payment("pay_text", "1250")
    wh.payment("pay_whole_float", 12.0)
    wh.payment("pay_null", None)
    wh.payment("pay_xyz", 100, "XYZ")
    wh.payment("pay_euro_neg", -5, "EURO")
    wh.refund("re_float", "pay_ok", 1.5)
    wh.invoice("in_xyz", 100, "XYZ")
    wh.dispute("dp_neg", "pay_ok", -300)
    wh.intent("pi_neg", -1)
    wh.intent("pi_bool", True)
    wh.payment("pay_gone_neg", -1, gone="r1")
    assert wh.evaluate("impossible_amounts") == {
        ("pay_neg", "negative_amount"),
        ("pay_float", "non_integer_amount"),
        ("pay_text", "non_integer_amount"),
        ("pay_whole_float", "non_integer_amount"),
        ("pay_null", "non_integer_amount"),
        ("pay_xyz", "invalid_currency"),
        ("pay_euro_neg", "negative_amount"),
        ("pay_euro_neg", "invalid_currency"),
        ("re_float", "non_integer_amount"),
        ("in_xyz", "invalid_currency"),
        ("dp_neg", "negative_amount"),
        ("pi_neg", "negative_amount"),
        ("pi_bool", "non_integer_amount"),
    }
    rows = wh.rows("impossible_amounts")
    assert rows[("pay_float", "non_integer_amount")]["amount_minor"] is None
    assert rows[("pay_float", "non_integer_amount")]["detail"] == (
        "amount is not a JSON integer: 12.5"
    )
    assert rows[("pay_text", "non_integer_amount")]["detail"] == (
        'amount is not a JSON integer: "1250"'
    )
    assert (
        rows[("pay_xyz", "invalid_currency")]["detail"] == "currency 'XYZ' is not an ISO 4217 code"
    )
    assert rows[("re_float", "non_integer_amount")]["entity"] == "refund"
    assert rows[("pi_neg", "negative_amount")]["entity"] == "payment_intent"


def test_impossible_amounts_flags_a_record_without_amount_or_currency(wh: Wh) -> None:
    # As the sandbox's oracle: a missing amount is not a JSON integer, a missing currency is
    # not an ISO 4217 code.
    wh.con.execute(
        "INSERT INTO disputes (id, status, raw, content_hash, first_seen_run, last_seen_run) "
        """VALUES ('dp_bare', 'won', '{"id": "dp_bare", "status": "won"}', 'h', 'r1', 'r1')"""
    )
    assert wh.evaluate("impossible_amounts") == {
        ("dp_bare", "non_integer_amount"),
        ("dp_bare", "invalid_currency"),
    }
    rows = wh.rows("impossible_amounts")
    assert rows[("dp_bare", "non_integer_amount")]["detail"] == (
        "amount is not a JSON integer: missing"
    )
    assert rows[("dp_bare", "invalid_currency")]["detail"] == (
        "currency missing is not an ISO 4217 code"
    )


def test_impossible_amounts_leaves_out_a_resource_with_nothing_read(wh: Wh) -> None:
    wh.run("r1", scans={"refunds": ("incomplete", 2)}, records={"payments": 1})
    wh.payment("pay_neg", -1)
    wh.refund("re_neg", "pay_neg", -1, seen="r0")  # last night's row: not read tonight
    run = wh.checks("r1", only=["impossible_amounts"])["impossible_amounts"]
    assert (run.status, run.reason) == ("failed", None)
    assert run.coverage == (
        "all 1 payment; refunds not evaluated (incomplete: 2 pages failed); all 0 disputes; "
        "all 0 invoices; all 0 payment_intents"
    )
    assert wh.findings("impossible_amounts") == {("pay_neg", "negative_amount")}


def test_impossible_amounts_over_the_records_read_of_an_incomplete_resource(wh: Wh) -> None:
    wh.run("r1", scans={"refunds": ("incomplete", 1)}, records={"payments": 1, "refunds": 1})
    wh.failed_page("r1", "refunds", skip=200, size=200)
    wh.payment("pay_neg", -1)
    wh.refund("re_neg", "pay_neg", -1)  # read tonight
    wh.refund("re_stale", "pay_neg", -5, seen="r0")  # on the page that failed
    run = wh.checks("r1", only=["impossible_amounts"])["impossible_amounts"]
    assert run.coverage == (
        "all 1 payment; 1 refund read (offsets 200-399 could not be read); all 0 disputes; "
        "all 0 invoices; all 0 payment_intents"
    )
    assert wh.findings("impossible_amounts") == {
        ("pay_neg", "negative_amount"),
        ("re_neg", "negative_amount"),
    }


def test_unknown_status(wh: Wh) -> None:
    wh.payment("pay_ok", status="confirmed")
    wh.payment("pay_odd", status="settled")
    wh.payment("pay_case", status="Confirmed")
    wh.payment("pay_none", status=None)
    wh.refund("re_odd", "pay_ok", status="processing")
    wh.refund("re_ok", "pay_ok", status="reversed")
    wh.subscription("sub_odd", "cus_1", "zombie")
    wh.invoice("in_ok", status="uncollectible")
    wh.dispute("dp_odd", None, status="open")
    wh.intent("pi_odd", status="requires_confirmation")
    wh.intent("pi_ok", status="requires_capture")
    assert wh.evaluate("unknown_status") == {
        ("pay_odd", "unknown_status"),
        ("pay_case", "unknown_status"),
        ("pay_none", "unknown_status"),
        ("re_odd", "unknown_status"),
        ("sub_odd", "unknown_status"),
        ("dp_odd", "unknown_status"),
        ("pi_odd", "unknown_status"),
    }
    row = wh.rows("unknown_status")[("pay_odd", "unknown_status")]
    assert (row["amount_minor"], row["detail"]) == (
        None,
        "payment status 'settled' is not a known value",
    )


def test_unknown_status_skips_incomplete_resources(wh: Wh) -> None:
    wh.run("r1", scans={"subscriptions": "unavailable"})
    wh.subscription("sub_odd", "cus_1", "zombie")
    wh.payment("pay_odd", status="settled")
    assert wh.evaluate("unknown_status") == {("pay_odd", "unknown_status")}


def test_stuck_non_final(wh: Wh) -> None:
    wh.payment("pay_old_pending", status="pending", created_days_ago=8)
    wh.payment("pay_old_created", status="created", created_days_ago=30)
    wh.payment("pay_young", status="pending", created_days_ago=6.9)
    wh.payment("pay_final", status="confirmed", created_days_ago=30)
    wh.refund("re_old", "pay_final", status="pending", created_days_ago=10)
    wh.refund("re_done", "pay_final", status="succeeded", created_days_ago=10)
    wh.intent("pi_old", status="processing", created_days_ago=9)
    wh.intent("pi_done", status="succeeded", created_days_ago=9)
    wh.payment("pay_gone", status="pending", created_days_ago=30, gone="r1")
    assert wh.evaluate("stuck_non_final") == {
        ("pay_old_pending", "stuck_pending"),
        ("pay_old_created", "stuck_created"),
        ("re_old", "stuck_pending"),
        ("pi_old", "stuck_processing"),
    }


def test_stuck_non_final_uses_stuck_days(wh: Wh) -> None:
    wh.payment("pay_old_pending", status="pending", created_days_ago=8)
    assert wh.evaluate("stuck_non_final", params=CheckParams(stuck_days=9)) == set()


def test_intent_negative_amount(wh: Wh) -> None:
    wh.intent("pi_neg", -100, "JPY")
    wh.intent("pi_zero", 0)
    wh.intent("pi_float", -1.5)
    assert wh.evaluate("intent_negative_amount") == {("pi_neg", "negative_amount")}
    row = wh.rows("intent_negative_amount")[("pi_neg", "negative_amount")]
    assert (row["amount_minor"], row["currency"]) == (-100, "JPY")


def test_vanished_records(wh: Wh) -> None:
    wh.run("r0", day=-1, records={"payments": 3})
    wh.run("r1")
    wh.payment("pay_gone", 1000, gone="r1")
    wh.payment("pay_gone_before", gone="r0")
    wh.payment("pay_live")
    wh.subscription("sub_gone", "cus_1", gone="r1")
    wh.invoice("in_gone", 250, gone="r1")
    assert wh.evaluate("vanished_records") == {
        ("pay_gone", "vanished"),
        ("sub_gone", "vanished"),
        ("in_gone", "vanished"),
    }
    rows = wh.rows("vanished_records")
    assert rows[("in_gone", "vanished")]["amount_minor"] == 250
    assert rows[("sub_gone", "vanished")]["entity"] == "subscription"


def test_suspicious_changes(wh: Wh) -> None:
    wh.run("r0", day=-1, records={"payments": 3})
    wh.run("r1")
    wh.version("payments", "pay_back", 1, "r0", "new", "refunded")
    wh.version("payments", "pay_back", 2, "r1", "changed", "confirmed")
    wh.version("payments", "pay_fine", 1, "r0", "new", "confirmed")
    wh.version("payments", "pay_fine", 2, "r1", "changed", "refunded")
    wh.version("payments", "pay_amount", 1, "r0", "new", "confirmed", 1000)
    wh.version("payments", "pay_amount", 2, "r1", "changed", "confirmed", 1200)
    wh.version("refunds", "re_both", 1, "r0", "new", "succeeded", 100)
    wh.version("refunds", "re_both", 2, "r1", "changed", "pending", 90)
    wh.version("payments", "pay_new", 1, "r1", "new", "confirmed")
    wh.version("payments", "pay_back_again", 1, "r0", "new", "cancelled")
    wh.version("payments", "pay_back_again", 2, "r0", "gone", "cancelled")
    wh.version("payments", "pay_back_again", 3, "r1", "returned", "confirmed")
    assert wh.evaluate("suspicious_changes") == {
        ("pay_back", "illegal_transition"),
        ("pay_amount", "amount_changed"),
        ("re_both", "illegal_transition"),
        ("re_both", "amount_changed"),
        ("pay_back_again", "illegal_transition"),
    }
    rows = wh.rows("suspicious_changes")
    assert rows[("pay_back", "illegal_transition")]["detail"] == (
        "payment status changed refunded → confirmed since run r0"
    )
    assert rows[("pay_amount", "amount_changed")]["amount_minor"] == 1200
    assert rows[("re_both", "amount_changed")]["entity"] == "refund"


def test_volume_anomaly_not_evaluated_with_fewer_than_three_earlier_runs(wh: Wh) -> None:
    wh.run("r-2", day=-2)
    wh.run("r-1", day=-1)
    wh.run("r0", day=0, status="incomplete")
    wh.run("r1", day=1)
    run = wh.checks("r1", only=["volume_anomaly"])["volume_anomaly"]
    assert (run.status, run.reason) == (
        "not_evaluated",
        "fewer than 3 earlier complete runs to compare with",
    )


def test_volume_anomaly_against_the_mean_of_the_last_complete_runs(wh: Wh) -> None:
    wh.run("r-4", day=-4, new_records={"payments": 100000, "refunds": 9000})  # initial load
    wh.run("r-3", day=-3, new_records={"payments": 100, "refunds": 10})
    wh.run("r-2", day=-2, new_records={"payments": 120, "refunds": 10})
    wh.run("r-1", day=-1, new_records={"payments": 80, "refunds": 10})
    wh.run("r1", new_records={"payments": 151, "refunds": 4, "invoices": 0})
    assert wh.evaluate("volume_anomaly") == {
        ("payments", "volume_spike"),
        ("refunds", "volume_drop"),
    }
    detail = wh.rows("volume_anomaly")[("payments", "volume_spike")]["detail"]
    assert (
        detail == "151 new payments tonight against a mean of 100.0 over the last 3 complete runs"
    )
    wh.con.execute("DELETE FROM findings; DELETE FROM check_runs")
    assert wh.evaluate("volume_anomaly", params=CheckParams(volume_ratio=0.6)) == set()
