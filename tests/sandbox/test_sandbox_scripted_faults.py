"""Scripted faults for the parallel-paging and retry tests: storm, cap change, shifts, delays,
a poisoned record, and switching every fault at run time (in-process and over HTTP)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from typer.testing import CliRunner

import recon.sandbox.server as server
from recon.cli.sandbox import app as sandbox_cli
from recon.sandbox.admin import faults_changes
from recon.sandbox.data import Dataset
from recon.sandbox.switches import Delay, FaultSwitches, Poison, Shift
from recon.sandbox.truth import compute_findings

from .conftest import ClientFactory
from .sandbox_support import ANCHOR, BEARER, KEY

P = "/api/v1"
PATHS = {
    "payments": "payments",
    "refunds": "refunds",
    "disputes": "disputes",
    "subscriptions": "subscriptions",
    "invoices": "invoices",
    "payment_intents": "payment-intents",
}


class RecordingSleep:
    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


def _ids(r: httpx.Response) -> list[str]:
    assert r.status_code == 200, r.text
    return [rec["id"] for rec in r.json()["data"]]


def _page(client: httpx.Client, resource: str, skip: int, size: int = 200) -> httpx.Response:
    return client.get(f"{P}/{PATHS[resource]}?max-records={size}&skip={skip}", headers=KEY)


def _whole(client: httpx.Client, resource: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while True:
        r = _page(client, resource, len(out))
        data = r.json()["data"]
        out += data
        if len(data) < 200:
            return out


def _assert_envelope(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status
    body = r.json()
    assert set(body) == {"error", "message", "requestId"}
    assert body["error"] == code
    assert body["requestId"] == r.headers["X-Request-Id"]


# ---------------------------------------------------------------------------- text forms
def test_text_forms_parse_and_print_back() -> None:
    assert Poison.parse("disputes:17") == Poison("disputes", 17)
    assert Poison.parse("payment-intents:3").resource == "payment_intents"
    shift = Shift.parse("payments:after=3,delete=5,before=400,insert=2")
    assert shift == Shift("payments", 3, 5, 400, 2)
    assert Shift.parse(str(shift)) == shift
    assert Shift.parse("refunds:after=1,insert=4") == Shift("refunds", 1, 0, 0, 4)
    assert Delay.parse("payments:400=250") == Delay("payments", 400, 250.0)
    for bad, cls in [
        ("disputes", Poison),
        ("nowhere:1", Poison),
        ("disputes:-1", Poison),
        ("payments:delete=5", Shift),
        ("payments:after=0", Shift),
        ("payments:after=1,later=2", Shift),
        ("payments:400", Delay),
        ("payments:400=-1", Delay),
    ]:
        with pytest.raises(ValueError, match=r"\S"):
            cls.parse(bad)


# ---------------------------------------------------------------------------- storm
def test_a_storm_answers_the_first_requests_429(make_client: ClientFactory) -> None:
    client = make_client(storm=3, retry_after_s=1)
    answers = [client.get(f"{P}/payments?max-records=5", headers=KEY) for _ in range(5)]
    assert [r.status_code for r in answers] == [429, 429, 429, 200, 200]
    for r in answers[:3]:
        _assert_envelope(r, 429, "rate_limited")
        assert r.headers["Retry-After"] == "1"
    assert len({r.headers["X-Request-Id"] for r in answers}) == 5
    assert client.get("/_sandbox/faults").json()["stormed"] == 3


def test_a_storm_is_no_attempt_the_profile_faults_stay_the_same(
    make_client: ClientFactory,
) -> None:
    """What the storm turns away does not count as an attempt of the flaky profile."""

    def statuses(client: httpx.Client) -> list[int]:
        out = []
        for k in range(0, 40, 5):
            r = client.get(f"{P}/disputes?max-records=5&skip={k}", headers=KEY)
            while r.status_code == 429 and r.json()["message"] == "too many requests (storm)":
                r = client.get(f"{P}/disputes?max-records=5&skip={k}", headers=KEY)
            out.append(r.status_code)
        return out

    calm = statuses(make_client(payments=2000, faults="flaky"))
    stormy = statuses(make_client(payments=2000, faults="flaky", storm=4))
    assert set(calm) != {200}  # the flaky profile did fail some
    assert stormy == calm


def test_a_storm_can_start_at_run_time(make_client: ClientFactory) -> None:
    client = make_client()
    assert client.get(f"{P}/disputes", headers=KEY).status_code == 200
    state = client.app.state.sandbox  # type: ignore[attr-defined]
    state.set_faults(storm=2)
    codes = [client.get(f"{P}/disputes", headers=KEY).status_code for _ in range(3)]
    assert codes == [429, 429, 200]


# ---------------------------------------------------------------------------- page cap
def test_the_page_cap_changes_after_n_list_requests(make_client: ClientFactory) -> None:
    client = make_client(payments=1000, cap_after=2, cap_to=100)
    first = client.get(f"{P}/payments?max-records=200", headers=KEY).json()
    assert (len(first["data"]), first["nextOffset"]) == (200, 200)
    assert len(_ids(_page(client, "disputes", 0))) == 20  # 1000 // 50: below any cap
    third = client.get(f"{P}/payments?max-records=200&skip=200", headers=KEY).json()
    assert (len(third["data"]), third["nextOffset"], third["hasMore"]) == (100, 300, True)
    assert len(_ids(_page(client, "invoices", 0))) == 100
    faults = client.get("/_sandbox/faults").json()
    assert (faults["capNow"], faults["listRequests"]) == (100, 4)


def test_the_page_cap_can_be_switched_at_run_time(make_client: ClientFactory) -> None:
    client = make_client(payments=1000)
    assert len(_ids(_page(client, "payments", 0))) == 200
    r = client.post("/_sandbox/faults", json={"capAfter": 0, "capTo": 50}, headers=KEY)
    assert r.json()["capNow"] == 50
    assert len(_ids(_page(client, "payments", 0))) == 50
    client.post("/_sandbox/faults", json={"capAfter": None}, headers=KEY)
    assert len(_ids(_page(client, "payments", 0))) == 200


# ---------------------------------------------------------------------------- shifts
def test_a_shift_deletes_before_the_offset_and_inserts_at_the_head(
    make_client: ClientFactory,
) -> None:
    client = make_client(payments=1000, shifts=("payments:after=1,delete=5,before=400,insert=2",))
    ds = Dataset(7, 1000, ANCHOR)
    generated = [ds.payment_id(i) for i in range(1000)]
    assert _ids(_page(client, "payments", 0)) == generated[:200]  # the shift follows this page
    shifted = client.get("/_sandbox/faults").json()["shifted"]
    assert len(shifted) == 1
    deleted, inserted = shifted[0]["deleted"], shifted[0]["inserted"]
    assert (len(deleted), len(inserted)) == (5, 2)

    def harmless(i: int) -> bool:  # a clean confirmed payment without refunds
        return (
            i not in ds.pay_kind
            and i not in ds.dup_partner
            and ds.payment_status(i) == "confirmed"
            and ds.refund_count_of(i) == 0
        )

    positions = sorted(generated.index(d) for d in deleted)
    assert max(positions) < 400
    assert all(harmless(i) for i in positions)
    # the nearest harmless ones below offset 400: none was passed over
    assert not [i for i in range(positions[0], 400) if harmless(i) and i not in positions]
    now = inserted[::-1] + [g for g in generated if g not in deleted]
    assert _ids(_page(client, "payments", 200)) == now[200:400]
    assert _ids(_page(client, "payments", 400)) == now[400:600]
    for d in deleted:
        r = client.get(f"{P}/payments/{d}", headers=BEARER)
        assert r.status_code == 404
    assert client.get(f"{P}/payments/{inserted[0]}", headers=BEARER).status_code == 200


@pytest.mark.slow  # a scan of the whole list per resource, against the truth
@pytest.mark.parametrize("resource", list(PATHS))
def test_shifts_change_no_finding_of_the_truth(make_client: ClientFactory, resource: str) -> None:
    client = make_client(
        payments=2000, shifts=(f"{resource}:after=1,delete=15,before=180,insert=3",)
    )
    truth = client.get("/_sandbox/truth").json()
    _page(client, resource, 0)
    shifted = client.get("/_sandbox/faults").json()["shifted"]
    assert len(shifted[0]["deleted"]) == 15
    assert len(shifted[0]["inserted"]) == 3
    served = {res: _whole(client, res) for res in PATHS}
    assert len(served[resource]) == truth["counts"][resource] - 15 + 3
    as_of = ANCHOR.replace(hour=12)
    assert compute_findings(served, as_of=as_of) == truth["findings"]


def test_shift_now_in_process(make_client: ClientFactory) -> None:
    client = make_client(payments=2000)
    before = _ids(_page(client, "disputes", 0, 40))
    state = client.app.state.sandbox  # type: ignore[attr-defined]
    done = state.shift(Shift("disputes", 1, delete=2, before=30, insert=1))
    assert len(done["deleted"]) == 2
    assert set(done["deleted"]) <= set(before[:30])
    after = _ids(_page(client, "disputes", 0, 39))
    assert after == done["inserted"] + [d for d in before if d not in done["deleted"]]


# ---------------------------------------------------------------------------- delays
def test_a_delay_holds_back_the_page_at_one_offset(make_client: ClientFactory) -> None:
    sleep = RecordingSleep()
    client = make_client(payments=1000, delays=("payments:400=250",), sleep=sleep)
    for skip in (0, 200, 400, 600):
        _page(client, "payments", skip)
    _page(client, "disputes", 400)
    assert sleep.asked == [0.25]
    client.app.state.sandbox.set_faults(latency_ms=10)  # type: ignore[attr-defined]
    _page(client, "payments", 400)
    _page(client, "payments", 0)
    assert sleep.asked[1:] == [pytest.approx(0.26), pytest.approx(0.01)]


# ---------------------------------------------------------------------------- poison
def test_every_window_holding_the_poisoned_record_fails_its_neighbours_do_not(
    make_client: ClientFactory,
) -> None:
    client = make_client(payments=2000, poison=("disputes:17",))
    ds = Dataset(7, 2000, ANCHOR)
    disputes = [ds.dispute(d)["id"] for d in range(ds.count("disputes"))]
    for skip, size in ((0, 200), (0, 18), (17, 1), (10, 10), (17, 50)):
        seen = set()
        for _ in range(3):
            r = _page(client, "disputes", skip, size)
            _assert_envelope(r, 500, "internal_error")
            seen.add(r.headers["X-Request-Id"])
        assert len(seen) == 3  # a fresh request id every time
    assert _ids(_page(client, "disputes", 0, 17)) == disputes[:17]
    assert _ids(_page(client, "disputes", 18, 200)) == disputes[18:]
    narrowed = [
        i for k in range(len(disputes)) if k != 17 for i in _ids(_page(client, "disputes", k, 1))
    ]
    assert narrowed == disputes[:17] + disputes[18:]
    assert _ids(_page(client, "payments", 0, 50))  # other lists are not touched


def test_poison_can_be_switched_off_and_the_data_is_the_clean_data(
    make_client: ClientFactory,
) -> None:
    clean = make_client(payments=2000)
    poisoned = make_client(payments=2000, poison=("refunds:40", "payments:5"))
    assert _page(poisoned, "refunds", 0).status_code == 500
    assert _page(poisoned, "payments", 0).status_code == 500
    r = poisoned.post("/_sandbox/faults", json={"poison": ["refunds:40"]}, headers=KEY)
    assert r.json()["poison"] == ["refunds:40"]
    assert _page(poisoned, "payments", 0).content == _page(clean, "payments", 0).content
    assert _page(poisoned, "refunds", 0).status_code == 500
    poisoned.app.state.sandbox.set_faults(poison=[])  # type: ignore[attr-defined]
    for resource in PATHS:
        assert _page(poisoned, resource, 0).content == _page(clean, resource, 0).content


def test_poison_follows_the_record_through_a_status_filter(make_client: ClientFactory) -> None:
    client = make_client(payments=1000, poison=("payments:5",))
    status = Dataset(7, 1000, ANCHOR).payment_status(5)
    other = "expired" if status != "expired" else "cancelled"
    r = client.get(f"{P}/payments?status={status}&max-records=200", headers=KEY)
    assert r.status_code == 500
    r = client.get(f"{P}/payments?status={other}&max-records=200", headers=KEY)
    assert r.status_code == 200


# ---------------------------------------------------------------------------- switches
def test_all_faults_off_and_on_at_run_time(make_client: ClientFactory) -> None:
    client = make_client(
        payments=2000, faults="chaos,strict,capped", poison=("disputes:1",), cap_after=0
    )
    state = client.app.state.sandbox  # type: ignore[attr-defined]
    poisoned_skip = client.get("/_sandbox/state").json()["poisonedPaymentsSkip"]
    assert client.get(f"{P}/refunds", headers=KEY).status_code == 404
    shown = state.set_faults(enabled=False)
    assert (shown["enabled"], shown["profile"]) == (False, "none")
    assert client.get(f"{P}/refunds", headers=KEY).status_code == 200
    assert len(_ids(_page(client, "payments", 0))) == 200
    assert _page(client, "payments", poisoned_skip).status_code == 200
    assert _page(client, "disputes", 0).status_code == 200
    for k in range(0, 600, 3):  # no flaky fault either
        assert client.get(f"{P}/invoices?max-records=3&skip={k}", headers=KEY).status_code == 200
    r = client.post("/_sandbox/faults", json={"enabled": True}, headers=KEY)
    assert r.json()["profile"] == "chaos,strict,capped"
    assert client.get(f"{P}/refunds", headers=KEY).status_code == 404
    assert _page(client, "payments", poisoned_skip).status_code == 503


def test_the_profile_can_be_switched_at_run_time(make_client: ClientFactory) -> None:
    client = make_client(payments=1000)
    assert len(_ids(_page(client, "payments", 0))) == 200
    r = client.post("/_sandbox/faults", json={"profile": "capped"}, headers=KEY)
    assert r.json()["profile"] == "capped"
    assert len(_ids(_page(client, "payments", 0))) == 100
    assert client.get("/_sandbox/state").json()["faults"] == "capped"


def test_switching_needs_the_api_key_and_checks_the_body(make_client: ClientFactory) -> None:
    client = make_client()
    _assert_envelope(client.post("/_sandbox/faults", json={"storm": 1}), 401, "unauthorized")
    wrong = {"x-api-key": "nope"}
    _assert_envelope(
        client.post("/_sandbox/faults", json={"storm": 1}, headers=wrong), 401, "unauthorized"
    )
    for body in (
        {"storms": 1},
        {"storm": -1},
        {"storm": True},
        {"poison": "disputes:1"},
        {"poison": ["disputes"]},
        {"profile": "sometimes"},
        {"rate": 0},
        {"capTo": 500, "capAfter": 1},
        {"enabled": "no"},
    ):
        r = client.post("/_sandbox/faults", json=body, headers=KEY)
        _assert_envelope(r, 400, "invalid_request")
    _assert_envelope(
        client.post("/_sandbox/faults", content=b"[1]", headers=KEY), 400, "invalid_request"
    )
    faults = client.get("/_sandbox/faults").json()
    assert (faults["storm"], faults["poison"], faults["pacing"]["rate"]) == (0, [], None)
    assert client.get(f"{P}/disputes", headers=KEY).status_code == 200


def test_reset_puts_back_the_configured_faults(make_client: ClientFactory) -> None:
    client = make_client(poison=("disputes:0",))
    client.post("/_sandbox/faults", json={"poison": [], "capAfter": 0}, headers=KEY)
    assert _page(client, "disputes", 0).status_code == 200
    client.post("/_sandbox/reset")
    assert _page(client, "disputes", 0).status_code == 500
    assert client.get("/_sandbox/faults").json()["capAfter"] is None


def test_switches_copy_keeps_the_counters() -> None:
    sw = FaultSwitches(storm=2, stormed=1, list_requests=9)
    changed = sw.changed(poison=["disputes:3"], cap_after=4)
    assert changed.poison == (Poison("disputes", 3),)
    assert (changed.stormed, changed.list_requests, changed.cap_after) == (1, 9, 4)
    assert sw.poison == ()


# ---------------------------------------------------------------------------- command line
def test_serve_refuses_bad_fault_options() -> None:
    runner = CliRunner()
    for args, message in (
        (["--poison", "disputes"], "LIST:INDEX"),
        (["--shift", "payments:delete=1"], "after=N"),
        (["--delay", "payments:1"], "LIST:SKIP=MS"),
        (["--rate", "0"], "rate"),
        (["--max-in-flight", "0"], "max_in_flight"),
    ):
        result = runner.invoke(sandbox_cli, ["serve", "--port", "1", *args])
        assert result.exit_code == 2, args
        assert message in result.output


def test_every_serve_option_has_its_own_help_line() -> None:
    result = CliRunner().invoke(sandbox_cli, ["serve", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    rows = [line.strip().strip("│").strip() for line in result.output.splitlines()]
    lines = {row.split()[0]: row for row in rows if row.startswith("--")}
    wanted = {
        "--latency-ms": "milliseconds",
        "--latency-jitter-ms": "deterministic from the seed",
        "--rate": "Token bucket",
        "--burst": "at once",
        "--max-in-flight": "503",
        "--cache-records": "0 keeps them all",
        "--storm": "429",
        "--cap-after": "--cap-to",
        "--cap-to": "page cap",
        "--shift": "delete K records before offset X",
        "--delay": "takes MS longer",
        "--poison": "fails with a 500",
    }
    for option, text in wanted.items():
        assert text in lines[option], option


def test_text_forms_reach_the_config_from_json_too() -> None:
    body = orjson.dumps({"shifts": ["payments:after=2,insert=1"], "delays": ["refunds:0=5"]})
    changes = faults_changes(orjson.loads(body))
    sw = FaultSwitches().changed(**changes)
    assert sw.shifts == (Shift("payments", 2, 0, 0, 1),)
    assert sw.delays == (Delay("refunds", 0, 5.0),)


def test_the_readme_sandbox_commands_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `recon sandbox serve` line of the docs the README's sandbox and accounts sections
    moved to builds its sandbox (not served here)."""
    docs = Path(__file__).resolve().parents[2] / "docs"
    lines = [
        line.strip()
        for doc in ("accounts.md", "sandbox.md")
        for line in (docs / doc).read_text().splitlines()
        if line.strip().startswith(".venv/bin/recon sandbox serve")
    ]
    assert len(lines) >= 3
    served: list[Any] = []
    monkeypatch.setattr(server, "serve_app", lambda app, port, **_: served.append(app))
    # several accounts (`--account`): each account's app, the first standing for the line
    monkeypatch.setattr(server, "serve_apps", lambda apps, on_ready: served.append(apps[0][0]))
    for line in lines:
        argv = [*shlex.split(line)[2:], "--prewarm", "off", "--payments", "300"]
        result = CliRunner().invoke(sandbox_cli, argv)
        assert result.exit_code == 0, (line, result.output)
    assert len(served) == len(lines)
    last = served[-1].state.sandbox.faults_json()
    assert (last["storm"], last["capAfter"], last["poison"]) == (20, 10, ["disputes:17"])
