"""In-flight work is not a break: pending refunds younger than RECON_REFUND_GRACE_HOURS are
shown as in flight (check `refund_in_flight`), not as errors; a refund status recon does
not know is counted, said so in the total's detail, and flagged on its own."""

from __future__ import annotations

import pytest

from recon.checks import CheckParams
from recon.config.settings import load_settings
from recon.errors import ConfigError

from .builder import Wh

REFUND_TOTAL_CHECKS = (
    "refunded_amount_mismatch",
    "partially_refunded_out_of_range",
    "confirmed_with_refunds",
    "over_refunded",
)


def _in_flight_fixture(wh: Wh) -> None:
    # A refund created yesterday on a confirmed payment: the provider has not moved the
    # payment yet. Not an error tonight.
    wh.payment("pay_conf", 1000, status="confirmed")
    wh.refund("re_young", "pay_conf", 250, status="pending", created_days_ago=1)
    # partially refunded, and a young pending refund for the rest: about to become refunded.
    wh.payment("pay_part", 1000, status="partially_refunded")
    wh.refund("re_p1", "pay_part", 300, created_days_ago=5)
    wh.refund("re_p2", "pay_part", 700, status="pending", created_days_ago=0.5)
    # refunded at once when the (young) refund was created: consistent either way.
    wh.payment("pay_ref", 1000, status="refunded")
    wh.refund("re_r1", "pay_ref", 1000, status="pending", created_days_ago=0.2)
    # A young pending refund beyond the amount: the verdict waits for it.
    wh.payment("pay_over", 1000, status="partially_refunded")
    wh.refund("re_o1", "pay_over", 400, created_days_ago=4)
    wh.refund("re_o2", "pay_over", 900, status="pending", created_days_ago=1)
    # Older than the grace: counted and judged as before.
    wh.payment("pay_old", 1000, status="confirmed")
    wh.refund("re_old", "pay_old", 250, status="pending", created_days_ago=3)


def test_young_pending_refunds_are_not_errors(wh: Wh) -> None:
    _in_flight_fixture(wh)
    wh.run("r1")
    runs = wh.checks("r1")
    for name in REFUND_TOTAL_CHECKS:
        assert runs[name].status in ("passed", "failed"), name
    assert wh.findings("confirmed_with_refunds") == {("pay_old", "confirmed_with_refunds")}
    assert wh.findings("partially_refunded_out_of_range") == set()
    assert wh.findings("over_refunded") == set()
    assert wh.findings("refunded_amount_mismatch") == set()


def test_young_pending_refunds_are_shown_as_in_flight(wh: Wh) -> None:
    _in_flight_fixture(wh)
    assert wh.evaluate("refund_in_flight") == {
        ("pay_conf", "refund_in_flight"),
        ("pay_part", "refund_in_flight"),
        ("pay_ref", "refund_in_flight"),
        ("pay_over", "refund_in_flight"),
    }
    row = wh.rows("refund_in_flight")[("pay_conf", "refund_in_flight")]
    assert (row["severity"], row["currency"], row["amount_minor"]) == ("info", "EUR", 250)
    assert row["detail"] == (
        "confirmed payment of EUR 10.00: EUR 2.50 in 1 pending refund younger than 48 h "
        "(other counted refunds: EUR 0.00)"
    )


@pytest.mark.usefixtures("clean_env")
def test_the_grace_is_a_bound_setting(wh: Wh, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_REFUND_GRACE_HOURS", "12")
    params = CheckParams.from_settings(load_settings())
    assert params.refund_grace_hours == 12
    _in_flight_fixture(wh)
    assert wh.evaluate("confirmed_with_refunds", params=params) == {
        ("pay_conf", "confirmed_with_refunds"),
        ("pay_old", "confirmed_with_refunds"),
    }
    assert wh.findings("refund_in_flight") == set()


@pytest.mark.usefixtures("clean_env")
def test_the_grace_defaults_to_48_hours_and_rejects_negatives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings().refund_grace_hours == 48
    monkeypatch.setenv("RECON_REFUND_GRACE_HOURS", "-1")
    with pytest.raises(ConfigError, match=r"^RECON_REFUND_GRACE_HOURS: "):
        load_settings()


def test_a_refund_status_recon_does_not_know_is_counted_said_and_flagged(wh: Wh) -> None:
    wh.payment("pay_u", 1000, status="refunded")
    wh.refund("re_a", "pay_u", 500)
    wh.refund("re_b", "pay_u", 300, status="in_review")
    wh.refund("re_c", "pay_u", 100, status=None)
    wh.run("r1")
    wh.checks("r1")
    row = wh.rows("refunded_amount_mismatch")[("pay_u", "refunded_short")]
    assert row["detail"] == (
        "refunded EUR 9.00 of EUR 10.00 (in flight: EUR 0.00; 3 counted refunds; "
        "assumed counted: EUR 4.00 in 2 refunds of unknown or no status)"
    )
    assert wh.findings("unknown_status") == {("re_b", "unknown_status"), ("re_c", "unknown_status")}


def test_refund_statuses_configured_as_failed_are_known(wh: Wh) -> None:
    wh.payment("pay_1", 1000, status="confirmed")
    wh.refund("re_hold", "pay_1", 1000, status="on_hold")
    params = CheckParams(failed_statuses=("failed", "on_hold"))
    assert wh.evaluate("unknown_status", params=params) == set()
