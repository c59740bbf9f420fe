"""Gating at the right grain: a check evaluates over the records read tonight where its
rules allow it, says what its verdict covers (`check_runs.coverage`), and never raises a
finding because a counterpart sits on a page that could not be read."""

from __future__ import annotations

from .builder import Wh


def _payments_page_failed(wh: Wh, **records: int) -> None:
    counts = {"payments": 2, "refunds": 4, "disputes": 1, "invoices": 0, **records}
    wh.run("r1", scans={"payments": ("incomplete", 1)}, records=counts)
    wh.failed_page("r1", "payments", skip=400, size=200)


def _fixture(wh: Wh) -> None:
    # Read tonight: a refunded payment refunded short.
    wh.payment("pay_read", 1000, status="refunded")
    wh.refund("re_read", "pay_read", 600)
    # On the unread page: the warehouse still holds last night's row (confirmed), but the
    # payment has since been refunded; judging the stale row would be a false finding.
    wh.payment("pay_stale", 1000, status="confirmed", seen="r0", first_seen="r0")
    wh.refund("re_stale", "pay_stale", 1000)
    # A refund whose payment is new and sits on the unread page (not in the warehouse at all),
    # and one in another currency than its (unread) payment.
    wh.refund("re_unread", "pay_unread", 100)
    wh.refund("re_usd", "pay_stale", 100, "USD")
    wh.payment("pay_conf", 1000, status="confirmed")
    wh.dispute("dp_stale", "pay_stale")


def test_one_failed_payments_page_no_longer_silences_the_refund_checks(wh: Wh) -> None:
    _fixture(wh)
    _payments_page_failed(wh)
    runs = wh.checks("r1")
    evaluated = {
        "refunded_amount_mismatch",
        "partially_refunded_out_of_range",
        "confirmed_with_refunds",
        "over_refunded",
        "refund_currency_mismatch",
        "refund_on_unrefundable_payment",
        "dispute_on_refunded_payment",
        "duplicate_payment_reference",
        "impossible_amounts",
        "unknown_status",
        "stuck_non_final",
    }
    for name in evaluated:
        assert runs[name].status in ("passed", "failed"), (name, runs[name].reason)
    assert wh.findings("refunded_amount_mismatch") == {("pay_read", "refunded_short")}
    # Precision on what was read: nothing about pay_stale or the unread payments.
    for name in evaluated - {"refunded_amount_mismatch"}:
        assert wh.findings(name) == set(), name
    # The one check that needs every payment cannot run.
    run = runs["refund_unknown_payment"]
    assert (run.status, run.reason) == ("not_evaluated", "payments incomplete: 1 page failed")


def test_coverage_says_what_each_verdict_covers(wh: Wh) -> None:
    _fixture(wh)
    _payments_page_failed(wh, payments=19_800, refunds=5_154)
    runs = wh.checks("r1")
    assert runs["refunded_amount_mismatch"].coverage == (
        "19,800 payments read (offsets 400-599 could not be read); all 5,154 refunds"
    )
    assert runs["refund_unknown_payment"].coverage is None
    assert runs["open_invoices"].coverage == "all 0 invoices"
    assert runs["impossible_amounts"].coverage == (
        # per resource, in the catalogue's order (recon.catalogue.resources)
        "19,800 payments read (offsets 400-599 could not be read); all 5,154 refunds; "
        "all 1 dispute; all 0 invoices; all 0 payment_intents"
    )
    stored = wh.con.execute(
        "SELECT coverage FROM check_runs WHERE run_id = 'r1' AND check_name = 'over_refunded'"
    ).fetchone()
    assert stored == (runs["over_refunded"].coverage,)


def test_coverage_merges_adjacent_failed_pages_and_counts_failed_fetches_by_id(wh: Wh) -> None:
    wh.run(
        "r1",
        scans={"payments": ("incomplete", 3), "invoices": "unavailable"},
        records={"payments": 10, "invoices": 3},
    )
    for skip in (600, 200, 400, 1400):
        wh.failed_page("r1", "payments", skip=skip, size=200)
    wh.con.execute(
        "INSERT INTO api_calls (run_id, call_id, resource, method, path, query, attempt, "
        "outcome, attempted_at) VALUES ('r1', 'c_in', 'invoices', 'GET', "
        "'/api/v1/invoices/in_9', NULL, 3, 'failed', now())"
    )
    runs = wh.checks("r1", only=["stuck_non_final", "open_invoices"])
    assert runs["stuck_non_final"].coverage == (
        "10 payments read (offsets 200-799 and 1,400-1,599 could not be read); all 0 refunds; "
        "all 0 payment_intents"
    )
    assert runs["open_invoices"].coverage == (
        "3 invoices read (the list is not offered; 1 request failed)"
    )


def test_a_tolerated_resource_with_nothing_read_is_not_evaluated(wh: Wh) -> None:
    wh.payment("pay_stale", status="refunded", seen="r0")
    wh.run("r1", scans={"payments": ("incomplete", 1)}, records={"payments": 0})
    run = wh.checks("r1", only=["refunded_amount_mismatch"])["refunded_amount_mismatch"]
    assert (run.status, run.reason) == (
        "not_evaluated",
        "payments incomplete: 1 page failed; no record read",
    )


def test_findings_about_unread_records_stay_open_and_read_ones_resolve(wh: Wh) -> None:
    wh.payment("pay_a", -1, seen="r0", first_seen="r0")
    wh.payment("pay_b", -2, seen="r0", first_seen="r0")
    wh.payment("pay_c", 1000, status="refunded", seen="r0", first_seen="r0")
    wh.run("r0", day=-1, records={"payments": 3})
    wh.con.execute("UPDATE payments SET last_seen_run = 'r0'")
    wh.checks("r0")
    assert wh.findings("impossible_amounts", "r0") == {
        ("pay_a", "negative_amount"),
        ("pay_b", "negative_amount"),
    }
    assert wh.findings("refunded_amount_mismatch", "r0") == {("pay_c", "refunded_short")}
    # Tonight pay_a is read with a fixed amount, pay_b and pay_c sit on the failed page.
    wh.con.execute("UPDATE payments SET amount_minor = 5, last_seen_run = 'r1' WHERE id = 'pay_a'")
    wh.run("r1", scans={"payments": ("incomplete", 1)}, records={"payments": 1})
    runs = wh.checks("r1")
    assert runs["impossible_amounts"].status == "passed"
    states = {
        r[0]: r[1]
        for r in wh.con.execute(
            "SELECT entity_id, state FROM findings WHERE run_id = 'r1' "
            "AND check_name = 'impossible_amounts'"
        ).fetchall()
    }
    assert states == {"pay_a": "resolved", "pay_b": "open"}
    # A check over related records resolves nothing while an input is partial.
    assert runs["refunded_amount_mismatch"].status == "passed"
    assert wh.rows("refunded_amount_mismatch", "r1")[("pay_c", "refunded_short")]["state"] == (
        "open"
    )
