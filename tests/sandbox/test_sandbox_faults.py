"""Fault profiles: deterministic, retryable (except chaos's page), drift, strict, capped."""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest

from recon.sandbox.faults import FaultPlan, FaultProfile

from .conftest import ClientFactory
from .sandbox_support import KEY

P = "/api/v1"


def test_profiles_parse_and_combine() -> None:
    assert FaultProfile.parse("none") == FaultProfile()
    chaos = FaultProfile.parse("chaos")
    assert chaos.flaky
    assert chaos.chaos
    both = FaultProfile.parse("flaky,capped")
    assert both.flaky
    assert both.capped
    assert both.name == "flaky,capped"
    with pytest.raises(ValueError, match="unknown fault profile"):
        FaultProfile.parse("sometimes")


def test_decisions_are_deterministic_and_retries_succeed() -> None:
    def run(seed: int) -> list[Any]:
        plan = FaultPlan(FaultProfile.parse("flaky"), seed)
        out = []
        for skip in range(0, 40_000, 200):
            q = f"max-records=200&skip={skip}"
            for _ in range(3):
                out.append(
                    plan.decide(
                        "GET", "/api/v1/payments", q, plan.attempt("GET", "/api/v1/payments", q)
                    )
                )
        return out

    a, b = run(1), run(1)
    assert a == b
    assert a != run(2)
    firsts = a[0::3]
    share = sum(f is not None for f in firsts) / len(firsts)
    assert 0.08 < share < 0.25
    assert all(f is None for f in a[2::3])  # the third attempt always gets through
    kinds = Counter(str(f) for f in firsts if f is not None)
    assert {"429", "500", "502", "503", "truncated", "slow"} <= set(kinds)


def _fetch(client: httpx.Client, url: str, attempts: int = 5) -> tuple[httpx.Response, list[int]]:
    statuses = []
    for _ in range(attempts):
        r = client.get(url, headers=KEY)
        statuses.append(r.status_code)
        if r.status_code == 200:
            try:
                r.json()
            except ValueError:
                statuses[-1] = -1  # truncated body
                continue
            return r, statuses
    return r, statuses


def test_flaky_pages_complete_with_retries(make_client: ClientFactory) -> None:
    client = make_client(payments=6000, faults="flaky")
    seen: set[str] = set()
    failures: Counter[int] = Counter()
    skip: int | None = 0
    while skip is not None:
        r, statuses = _fetch(client, f"{P}/payments?max-records=200&skip={skip}")
        failures.update(s for s in statuses if s != 200)
        body = r.json()
        seen |= {p["id"] for p in body["data"]}
        skip = body["nextOffset"]
    assert len(seen) == 6000
    assert failures  # some attempts did fail
    r = client.get(f"{P}/payments?max-records=1&skip=1", headers=KEY)
    for _ in range(20):
        r = client.get(f"{P}/payments?max-records=1&skip={_}", headers=KEY)
        if r.status_code == 429:
            assert r.headers["Retry-After"] == "0"
            assert r.json()["error"] == "rate_limited"
            assert r.json()["requestId"] == r.headers["X-Request-Id"]


def test_flaky_errors_use_the_envelope(make_client: ClientFactory) -> None:
    client = make_client(payments=2000, faults="flaky")
    errors = []
    for skip in range(0, 2000, 10):
        r = client.get(f"{P}/disputes?max-records=5&skip={skip}", headers=KEY)
        if r.status_code >= 400:
            errors.append(r)
    assert errors
    for r in errors:
        assert r.status_code in (429, 500, 502, 503)
        assert r.json()["requestId"] == r.headers["X-Request-Id"]


def test_chaos_has_one_page_that_always_fails(make_client: ClientFactory) -> None:
    client = make_client(payments=2000, faults="chaos")
    poisoned = client.get("/_sandbox/state").json()["poisonedPaymentsSkip"]
    assert poisoned % 200 == 0
    assert 0 < poisoned < 2000
    for _ in range(6):
        r = client.get(f"{P}/payments?max-records=200&skip={poisoned}", headers=KEY)
        assert r.status_code == 503
        assert r.json()["requestId"] == r.headers["X-Request-Id"]
    other, _ = _fetch(
        client, f"{P}/payments?max-records=200&skip={poisoned + 200 if poisoned < 1800 else 0}"
    )
    assert other.status_code == 200


def test_creates_survive_a_lost_answer(make_client: ClientFactory) -> None:
    """Under flaky, a create may commit and still answer 5xx; a retry with the key returns it."""
    client = make_client(payments=300, faults="flaky")
    for n in range(60):
        headers = {**KEY, "Idempotency-Key": f"key-{n}"}
        answers = [
            client.post(f"{P}/coupons", json={"name": f"c{n}"}, headers=headers) for _ in range(3)
        ]
        ok = [a for a in answers if a.status_code == 201]
        assert ok
        assert len({a.json()["id"] for a in ok}) == 1
    created = client.get("/_sandbox/state").json()["created"]["coupons"]
    assert created == 60


def test_drift_inserts_and_deletes_while_paging(make_client: ClientFactory) -> None:
    client = make_client(payments=2000, faults="drift")
    truth_before = client.get("/_sandbox/truth").content
    ids: list[str] = []
    skip: int | None = 0
    while skip is not None:
        body = client.get(f"{P}/payments?max-records=200&skip={skip}", headers=KEY).json()
        ids += [p["id"] for p in body["data"]]
        skip = body["nextOffset"]
    state = client.get("/_sandbox/state").json()["drift"]["payments"]
    assert state["servedPages"] == len(state["inserted"]) == len(state["deleted"]) >= 10
    assert len(ids) != len(set(ids))  # inserts at the head push records into the next page
    # the records present from start to end: the generated ones minus the deleted
    first = client.get("/_sandbox/truth").json()
    assert first["counts"]["payments"] == 2000
    assert client.get("/_sandbox/truth").content == truth_before
    deleted = set(state["deleted"])
    present = client.get("/_sandbox/present?resource=payments").json()["ids"]
    assert len(present) == 2000 - len(deleted)
    assert not deleted & set(present)
    assert set(present) <= set(ids)  # records present throughout were all seen (here)
    for pid in deleted:
        r = client.get(
            f"{P}/payments/{pid}", headers={"Authorization": "Bearer sandbox-demo-token"}
        )
        assert r.status_code == 404
    # refunds drift too
    client.get(f"{P}/refunds?max-records=50", headers=KEY)
    rstate = client.get("/_sandbox/state").json()["drift"]["refunds"]
    assert len(rstate["inserted"]) == 1


def test_drift_deletions_are_skipped_by_positions(make_client: ClientFactory) -> None:
    client = make_client(payments=1000, faults="drift")
    total_before = client.get("/_sandbox/state").json()["counts"]["payments"]
    for _ in range(5):
        client.get(f"{P}/payments?max-records=10", headers=KEY)
    state = client.get("/_sandbox/state").json()
    assert state["counts"]["payments"] == total_before  # +5 inserted, -5 deleted
    everything: list[str] = []
    for skip in range(0, 1000, 200):
        everything += [
            p["id"]
            for p in client.get(f"{P}/payments?max-records=200&skip={skip}", headers=KEY).json()[
                "data"
            ]
        ]
    # paging itself drifts; but every id that was deleted before it began is absent
    assert not set(state["drift"]["payments"]["deleted"]) & set(everything)


def test_strict_turns_off_the_assumed_lists(make_client: ClientFactory) -> None:
    client = make_client(faults="strict")
    assert client.get(f"{P}/refunds", headers=KEY).status_code == 404
    assert client.get(f"{P}/invoices", headers=KEY).status_code == 404
    assert client.get(f"{P}/disputes", headers=KEY).status_code == 200
    assert client.post(f"{P}/coupons", json={"name": "x"}, headers=KEY).status_code == 201


@pytest.mark.parametrize("profile", ["capped", "capped-payments"])
def test_capped_returns_fewer_records_with_a_correct_next_offset(
    make_client: ClientFactory, profile: str
) -> None:
    client = make_client(payments=450, faults=profile)
    body = client.get(f"{P}/payments?max-records=200", headers=KEY).json()
    assert len(body["data"]) == 100
    assert body["nextOffset"] == 100
    assert body["hasMore"] is True
    ids: set[str] = set()
    skip: int | None = 0
    while skip is not None:
        body = client.get(f"{P}/payments?max-records=200&skip={skip}", headers=KEY).json()
        ids |= {p["id"] for p in body["data"]}
        skip = body["nextOffset"]
    assert len(ids) == 450
    disputes = client.get(f"{P}/payment-intents?max-records=200", headers=KEY).json()["data"]
    assert len(disputes) == (100 if profile == "capped" else 200)


def test_slow_answers_still_answer(make_client: ClientFactory) -> None:
    client = make_client(payments=2000, faults="flaky", slow_s=0.01)
    for skip in range(400):
        r = client.get(f"{P}/subscriptions?max-records=1&skip={skip}", headers=KEY)
        assert r.status_code in (200, 429, 500, 502, 503)
