"""Never pass on no data: a check whose inputs are incomplete or empty for a reason recon
knows is `not_evaluated`, never `passed` (issue 15, Verdicts)."""

from __future__ import annotations

from .builder import RESOURCES, Wh

FAILED_EVERYWHERE = dict.fromkeys(RESOURCES, ("incomplete", 1))


def _a_complete_night(wh: Wh) -> None:
    """Records of every kind, several of them findings, loaded by a complete run r0."""
    wh.payment("pay_1", 1000, status="refunded", seen="r0", first_seen="r0")
    wh.refund("re_1", "pay_1", 400, seen="r0")
    wh.refund("re_orphan", "pay_missing", 100, seen="r0")
    wh.payment("pay_dup_a", reference="ORD-1", seen="r0", first_seen="r0")
    wh.payment("pay_dup_b", reference="ORD-1", seen="r0", first_seen="r0")
    wh.invoice("in_1", due="2026-10-01", seen="r0", first_seen="r0")
    wh.subscription("sub_1", "cus_1", "active")
    wh.dispute("dp_1", "pay_1", seen="r0")
    wh.intent("pi_neg", -1)
    wh.run("r0", day=-1, records=dict.fromkeys(RESOURCES, 2))
    wh.checks("r0")


def test_no_check_passes_when_every_call_failed(wh: Wh) -> None:
    _a_complete_night(wh)
    # Tonight every call failed: no scan read a record; the warehouse still holds r0's rows.
    wh.run("r1", status="incomplete", scans=FAILED_EVERYWHERE)
    for resource in RESOURCES:
        wh.failed_page("r1", resource, skip=0)
    runs = wh.checks("r1")
    passed = sorted(name for name, run in runs.items() if run.status == "passed")
    assert passed == []
    assert runs["extraction_completeness"].status == "failed"
    for name, run in runs.items():
        if name != "extraction_completeness":
            assert run.status == "not_evaluated", (name, run.status, run.reason)
            assert run.reason, name
            assert run.coverage is None, name
    assert runs["vanished_records"].reason == "no resource complete: " + "; ".join(
        [f"{r} incomplete: 1 page failed" for r in RESOURCES]
        + ["payment_methods not scanned in this run"]
    )


def test_no_check_passes_on_a_first_run_where_every_call_failed(wh: Wh) -> None:
    wh.run("r1", status="incomplete", scans=FAILED_EVERYWHERE)
    runs = wh.checks("r1")
    assert sorted(n for n, r in runs.items() if r.status == "passed") == []


def test_a_run_with_no_resource_scans_evaluates_nothing(wh: Wh) -> None:
    wh.run("r1")
    wh.con.execute("DELETE FROM resource_scans")
    runs = wh.checks("r1")
    assert {r.status for r in runs.values()} == {"not_evaluated"}
    assert runs["extraction_completeness"].reason == "no resource was scanned in this run"


def test_history_checks_are_not_evaluated_on_the_first_run(wh: Wh) -> None:
    """Nothing can vanish or change on a first load: "passed" would claim what was not seen."""
    wh.payment("pay_1")
    wh.run("r1", records={"payments": 1})
    runs = wh.checks("r1", only=["vanished_records", "suspicious_changes"])
    for name in ("vanished_records", "suspicious_changes"):
        assert (runs[name].status, runs[name].reason) == (
            "not_evaluated",
            "first run: no earlier records to compare with",
        )
    wh.run("r2", day=1, records={"payments": 1})
    runs = wh.checks("r2", only=["vanished_records", "suspicious_changes"])
    assert runs["vanished_records"].status == "passed"
    assert runs["suspicious_changes"].status == "passed"
