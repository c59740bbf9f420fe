"""Contract tests: the client against the sandbox in-process (no socket), every profile."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from recon.api import ApiClient, CallRecord, Coupon, Payment, Refund
from recon.errors import ApiError, AuthError
from recon.sandbox import app as sandbox_app
from recon.sandbox import server as sandbox_server

from .conftest import FakeClock
from .sandbox_support import (
    LIST_RESOURCES,
    ScanResult,
    assert_call_log_complete,
    assert_no_duplicates,
    sandbox_client,
    scan_all,
)

SEED = 7
PAYMENTS = 1000


class Sandbox:
    def __init__(self, faults: str, **config: Any) -> None:
        cfg = sandbox_app.SandboxConfig(
            seed=SEED, payments=PAYMENTS, faults=faults, slow_s=0.01, **config
        )
        self.app = sandbox_app.create_app(cfg)
        self.transport = sandbox_server.InProcessTransport(self.app)
        self.records: list[CallRecord] = []
        self.clock = FakeClock()

    @property
    def state(self) -> Any:
        return self.app.state.sandbox

    def client(self, **overrides: Any) -> ApiClient:
        # waits (Retry-After, backoff) are faked: tests never sleep for real
        return sandbox_client(
            "http://127.0.0.1",
            self.records,
            transport=self.transport,
            clock=self.clock.clock,
            sleep=self.clock.sleep,
            **overrides,
        )

    def close(self) -> None:
        self.transport.close()


@pytest.fixture
def sandbox_factory() -> Iterator[Any]:
    made: list[Sandbox] = []

    def make(faults: str = "none", **config: Any) -> Sandbox:
        made.append(Sandbox(faults, **config))
        return made[-1]

    yield make
    for sb in made:
        sb.close()


@pytest.fixture(scope="module")
def baseline() -> dict[str, ScanResult]:
    sb = Sandbox("none")
    try:
        with sb.client() as client:
            return scan_all(client)
    finally:
        sb.close()


def test_baseline_matches_the_sandbox_counts(
    baseline: dict[str, ScanResult], sandbox_factory: Any
) -> None:
    counts = sandbox_factory().state.state_json()["counts"]
    for resource in LIST_RESOURCES:
        assert len(baseline[resource].ids) == counts[resource], resource
        assert baseline[resource].report is not None
        assert baseline[resource].report.status == "complete"
    assert_no_duplicates(baseline)


@pytest.mark.parametrize("faults", ["flaky", "capped", "flaky,capped"])
def test_retries_and_caps_lose_nothing(
    faults: str, baseline: dict[str, ScanResult], sandbox_factory: Any
) -> None:
    sb = sandbox_factory(faults)
    with sb.client() as client:
        results = scan_all(client)
    assert_no_duplicates(results)
    for resource in LIST_RESOURCES:
        assert results[resource].ids == baseline[resource].ids, resource
        assert results[resource].report.status == "complete"
    assert_call_log_complete(sb.records)
    if "flaky" in faults:
        assert any(r.outcome == "retry" for r in sb.records)


def test_strict_reports_the_assumed_lists_unavailable(
    baseline: dict[str, ScanResult], sandbox_factory: Any
) -> None:
    sb = sandbox_factory("strict")
    with sb.client() as client:
        results = scan_all(client)
    for resource in ("refunds", "invoices"):
        report = results[resource].report
        assert report.status == "unavailable"
        assert results[resource].ids == []
        assert "404" in report.reason
    for resource in ("payments", "disputes", "subscriptions", "payment_intents"):
        assert results[resource].ids == baseline[resource].ids


def test_chaos_records_the_poisoned_page_and_goes_on(
    baseline: dict[str, ScanResult], sandbox_factory: Any
) -> None:
    sb = sandbox_factory("chaos")
    poisoned = sb.state.poisoned_skip
    with sb.client() as client:
        results = scan_all(client)
    assert_no_duplicates(results)
    report = results["payments"].report
    assert report.status == "incomplete"
    # the window holding the poisoned payment fails every time (a 503 says nothing about
    # the records, so it is not narrowed): the page fetched at that skip is lost, whatever
    # skip paging reached it at (sequential: the poisoned skip; fetched ahead: overlapping)
    (failed,) = report.failed_pages
    assert failed.offset <= poisoned < failed.offset + 200
    assert failed.http_status == 503
    assert len(failed.request_ids) == 5  # one per attempt
    window = set(baseline["payments"].ids[failed.offset : failed.offset + 200])
    lost = baseline["payments"].id_set - results["payments"].id_set
    assert lost <= window  # nothing lost outside the failed window
    assert baseline["payments"].ids[poisoned] in lost
    assert len(lost) >= 199  # the window, less the one record the page before overlapped
    for resource in LIST_RESOURCES:
        if resource != "payments":
            assert results[resource].ids == baseline[resource].ids
            assert results[resource].report.status == "complete"
    assert_call_log_complete(sb.records)
    failed_calls = [r for r in sb.records if r.outcome == "failed"]
    assert failed.request_ids[-1] in [r.request_id for r in failed_calls]
    for call in failed_calls:  # a page fetched ahead at another offset may fail too
        query = dict(p.split("=", 1) for p in call.query.split("&"))
        skip, size = int(query["skip"]), int(query["max-records"])
        assert skip <= poisoned < skip + size, call.query


@pytest.mark.parametrize("faults", ["drift", "drift,capped", "drift,flaky"])
def test_drift_loses_nothing_that_never_changed(
    faults: str, baseline: dict[str, ScanResult], sandbox_factory: Any
) -> None:
    sb = sandbox_factory(faults)
    with sb.client() as client:
        results = scan_all(client)
    assert_no_duplicates(results)
    drift = sb.state.state_json()["drift"]
    for resource in LIST_RESOURCES:
        got = results[resource].id_set
        log = drift.get(resource, {"inserted": [], "deleted": []})
        never_changed = baseline[resource].id_set - set(log["deleted"])
        assert never_changed <= got, f"{resource} lost {sorted(never_changed - got)[:5]}"
        assert got <= baseline[resource].id_set | set(log["inserted"])
        assert results[resource].report.status == "complete"
    assert drift["payments"]["inserted"], "the drift profile did change the list"
    assert_call_log_complete(sb.records)


def test_every_operation_against_the_sandbox(sandbox_factory: Any) -> None:
    sb = sandbox_factory()
    fx = sb.state.fixtures_json()
    with sb.client() as client:
        setting = client.create_checkout_settings(
            locale="en-GB", allowed_origins=["https://shop.example"], payment_methods=["card"]
        )
        assert setting.locale == "en-GB"
        setting_id = setting.id or fx["checkoutSettings"][0]
        client.update_checkout_settings(
            setting_id, locale="de-DE", allowed_origins=[], payment_methods=["bank"]
        )
        open_sessions = [s["id"] for s in fx["checkoutSessions"] if s["status"] == "pending"]
        session = open_sessions[0]
        client.redirect_checkout_session(session, client_token="ct_test")
        expired = client.expire_checkout_session(open_sessions[-1])
        assert expired.id == open_sessions[-1]
        page = client.list_payments(max_records=5)
        assert len(page.data) == 5
        assert page.has_more is True
        assert page.next_offset == 5
        payment = client.get_payment(fx["payments"][0])
        assert isinstance(payment, Payment)
        assert isinstance(payment.amount_minor, int)
        assert client.list_payment_intents(max_records=3).data
        confirmed = fx["paymentsByStatus"]["confirmed"]
        refund = client.create_refund(confirmed)
        assert isinstance(refund, Refund)
        assert refund.amount is not None
        assert client.list_disputes(max_records=2).data
        link = client.get_payment_link(fx["paymentLinks"][0]["id"])
        client.deactivate_payment_link(link.id)
        client.list_payment_methods(fx["customers"][0])
        sub_id = fx["subscriptions"][0]
        sub = client.get_subscription(sub_id)
        client.update_subscription(sub_id, customer_id=sub.customer_id or "", price_id="price_x")
        client.get_invoice(fx["invoices"][0])
        client.update_product(fx["products"][0], name="Renamed")
        coupon = client.create_coupon(name="WINTER")
        assert isinstance(coupon, Coupon)
        client.update_coupon(coupon.id, name="WINTER2")
        client.create_tax_rate(display_name="VAT", percentage=19.0)
        client.delete_webhook_endpoint(fx["webhookEndpoints"][0])
        assert client.list_refunds(max_records=1).data
        assert client.list_invoices(max_records=1).data
    assert all(r.outcome == "ok" for r in sb.records), [r for r in sb.records if r.outcome != "ok"]


def test_a_wrong_key_stops_with_the_request_id(sandbox_factory: Any) -> None:
    sb = sandbox_factory()
    with sb.client(api_key="wrong-key") as client, pytest.raises(AuthError) as info:
        client.list_disputes()
    assert info.value.request_id
    assert "RECON_API_KEY" in str(info.value)
    assert len(sb.records) == 1


def test_creates_retried_through_faults_are_created_once(sandbox_factory: Any) -> None:
    sb = sandbox_factory("flaky", fault_rate=1.0)  # every first and second attempt faults
    fx = sb.state.fixtures_json()
    with sb.client() as client:
        for _ in range(3):
            client.create_coupon(name="ONCE")
        client.create_refund(fx["paymentsByStatus"]["confirmed"])
    state = sb.state.state_json()
    assert state["created"] == {"coupons": 3, "refunds": 1}
    keys = state["idempotency"]
    assert len(keys) == 4
    assert any(r.outcome == "retry" for r in sb.records)


def test_invalid_request_is_not_retried(sandbox_factory: Any) -> None:
    sb = sandbox_factory()
    with sb.client() as client, pytest.raises(ApiError) as info:
        client.create_refund("pay_does_not_exist")
    assert info.value.status is not None
    assert 400 <= info.value.status < 500
    assert info.value.request_id
    assert len(sb.records) == 1


def test_the_client_and_the_sandbox_openapi_agree_on_every_operation() -> None:
    """Method, path template and auth scheme of each of the 21 operations."""
    import re

    import yaml

    from .test_operations import OPERATIONS

    spec = sandbox_app.openapi_dict()
    assert yaml.safe_load(yaml.safe_dump(spec)) == spec  # plain YAML, served as such
    default_security = spec.get("security", [])
    templates = {
        (method.upper(), template): op
        for template, item in spec["paths"].items()
        for method, op in item.items()
        if method in ("get", "post", "patch", "delete", "put")
    }
    for number, method, path, _call, auth in OPERATIONS:
        matches = [
            op
            for (m, template), op in templates.items()
            if m == method and re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path)
        ]
        assert len(matches) == 1, (number, method, path)
        security = matches[0].get("security", default_security)
        schemes = {name for requirement in security for name in requirement}
        scheme = sandbox_bearer_or_key(schemes)
        assert scheme == auth, (number, method, path, schemes)


def sandbox_bearer_or_key(schemes: set[str]) -> str:
    lowered = {s.lower() for s in schemes}
    if any("bearer" in s for s in lowered):
        return "bearer"
    assert any("key" in s for s in lowered), schemes
    return "key"


def test_strict_invoices_come_one_by_one(
    baseline: dict[str, ScanResult], sandbox_factory: Any
) -> None:
    sb = sandbox_factory("strict")
    wanted = [*baseline["invoices"].ids[:30], "in_not_there"]
    with sb.client() as client:
        scan = client.scan_by_ids("invoices", wanted)
        got = [r["id"] for page in scan for r in page.records]
    assert got == wanted[:-1]
    assert scan.report.missing == ["in_not_there"]
    assert scan.report.status == "complete"
