"""Fault storm: ~20% of requests fail in every way the network and the server can fail.

The sandbox's `flaky` profile gives 429 (Retry-After) / 500 / 502 / 503 / truncated bodies /
slow answers; the FaultProxy in front of it adds connection resets and reads that stall past
the client's timeout. Pass: the run completes, the landed ids equal those of a fault-free run
(and the truth's counts), no duplicates, every attempt the server answered is in api_calls
with its request id, every injected transport fault is there as a retried attempt, and the
wall time stays within the fault-free time plus the waits the faults asked for.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from recon.night import nightly as steps
from recon.sandbox.app import SandboxConfig
from recon.sandbox.server import serve_in_thread

from .conftest import (
    KEY,
    TOKEN,
    Decide,
    fault_proxy,
    landed_ids,
    overrides_for,
    read_only,
    seeded,
    truth_of,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SEED, PAYMENTS = 17, 4000
TIMEOUT_S = 1.0
STALL_S = 2.5
RETRY_AFTER_S = 1


def _run(tmp: Path, url: str) -> tuple[steps.RunSummary, float]:
    started = time.monotonic()
    summary = steps.run_local(overrides_for(tmp, url))
    return summary, time.monotonic() - started


def test_fault_storm_completes_with_every_record_and_every_failure_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_TIMEOUT_S", str(TIMEOUT_S))
    clean_cfg = SandboxConfig(seed=SEED, payments=PAYMENTS, api_key=KEY, bearer_token=TOKEN)
    with serve_in_thread(clean_cfg) as url, fault_proxy(url, lambda *a: None) as proxy:
        clean, clean_s = _run(tmp_path / "clean", proxy.url)
        truth = truth_of(url)
    assert clean.status == "complete"

    storm_cfg = SandboxConfig(
        seed=SEED,
        payments=PAYMENTS,
        faults="flaky",
        fault_rate=0.14,  # + 6% from the proxy: about 20% of first attempts
        retry_after_s=RETRY_AFTER_S,
        slow_s=0.2,
        api_key=KEY,
        bearer_token=TOKEN,
    )
    decide = _every_kind(seeded(SEED, 0.07, ("reset", "stall", "cut")))
    with (
        serve_in_thread(storm_cfg) as url,
        fault_proxy(url, decide, stall_s=STALL_S) as proxy,
    ):
        storm, storm_s = _run(tmp_path / "storm", proxy.url)
    events = list(proxy.events)

    # The storm really happened: every kind of fault was met.
    api = [e for e in events if e.target.startswith("/api/")]
    first = {(e.method, e.target) for e in api}
    failed = [e for e in api if e.fault or (e.status or 200) >= 400]
    statuses = {e.status for e in failed}
    assert {429, 500, 502, 503} <= statuses, statuses
    assert {e.fault for e in failed} >= {"reset", "stall", "cut"}
    assert len(failed) >= 0.12 * len(first), (len(failed), len(first))

    # The run completes with exactly the records of the fault-free run and of the truth.
    assert (storm.status, storm.exit_code) == ("complete", steps.EXIT_COMPLETE)
    clean_ids, storm_ids = landed_ids(clean.db_path), landed_ids(storm.db_path)
    for table, ids in storm_ids.items():
        assert len(ids) == len(set(ids)), f"{table}: duplicates landed"
        assert set(ids) == set(clean_ids[table]), f"{table}: lost or extra records"
        assert len(ids) == truth["counts"][table]

    # Every attempt the server answered is in the call log with its request id; every
    # transport fault the proxy injected is there as an attempt without an HTTP status.
    con = read_only(storm.db_path)
    rows = con.execute(
        "SELECT http_status, error, request_id, outcome FROM api_calls WHERE run_id = ?",
        [storm.run_id],
    ).fetchall()
    logged_rids = {r[2] for r in rows if r[2]}
    answered = [e for e in api if e.request_id and e.fault in (None, "cut")]
    missing = [e for e in answered if e.request_id not in logged_rids]
    assert not missing, missing[:5]
    transport = [r for r in rows if r[0] is None]
    injected = [e for e in api if e.fault in ("reset", "stall", "cut")]
    assert len(transport) == len(injected), (transport[:5], len(injected))
    assert all(r[3] == "retry" for r in transport)
    assert {r[1] for r in transport} <= {"timeout", "read_error", "truncated_or_protocol_error"}
    truncated = con.execute(
        "SELECT count(*) FROM api_calls WHERE run_id = ? AND error = 'invalid_body' "
        "AND request_id IS NOT NULL",
        [storm.run_id],
    ).fetchone()
    assert truncated is not None
    assert truncated[0] >= 1  # the cut 200s were logged with the id the server gave

    # Wall time: fault-free time plus the waits the faults asked for (generously).
    asked = sum(RETRY_AFTER_S for e in api if e.status == 429)
    asked += sum(TIMEOUT_S for e in api if e.fault == "stall")
    bound = 3 * clean_s + asked + 30
    print(f"fault storm: clean {clean_s:.1f}s, storm {storm_s:.1f}s, waits asked {asked:.0f}s")
    shown = sorted(s for s in statuses if s)
    print(f"  {len(first)} requests, {len(failed)} failed attempts, statuses {shown}")
    assert storm_s <= bound


def test_fault_storm_answer_cut_mid_body_is_logged_with_its_request_id() -> None:
    """The status line and headers (with X-Request-Id) arrive, then the connection resets
    in the middle of the body: the retried attempt keeps the id the server gave."""
    from recon.api import CallRecord
    from tests.api.sandbox_support import sandbox_client

    from .conftest import sandbox

    records: list[CallRecord] = []
    cut_first = lambda method, target, attempt: "cut" if attempt == 0 else None  # noqa: E731
    with (
        sandbox(seed=2, payments=300) as url,
        fault_proxy(url, cut_first) as proxy,
        sandbox_client(proxy.url, records, api_key=KEY, bearer_token=TOKEN) as client,
    ):
        page = client.list_disputes()
    assert page.data
    cut = proxy.faults("cut")
    assert len(cut) == 1
    assert cut[0].request_id
    assert [(r.attempt, r.outcome, r.http_status) for r in records] == [
        (1, "retry", None),
        (2, "ok", 200),
    ]
    assert records[0].request_id == cut[0].request_id


def test_fault_storm_answer_dripping_slower_than_the_budget_is_cut_off() -> None:
    """A server that sends a byte every 0.25 s never trips a 1 s read timeout; the call
    budget (4 s, waits and retries included) must still end the call."""
    import threading

    from recon.api import CallRecord
    from tests.api.sandbox_support import sandbox_client

    from .conftest import sandbox

    records: list[CallRecord] = []
    outcome: list[BaseException | None] = []
    drip = lambda method, target, attempt: "drip"  # noqa: E731
    with (
        sandbox(seed=2, payments=300) as url,
        fault_proxy(url, drip, stall_s=1.0) as proxy,
        sandbox_client(
            proxy.url, records, api_key=KEY, bearer_token=TOKEN, timeout_s=1.0, call_budget_s=4.0
        ) as client,
    ):

        def call() -> None:
            try:
                client.list_disputes()
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)

        worker = threading.Thread(target=call, daemon=True)
        started = time.monotonic()
        worker.start()
        worker.join(timeout=4.0 + 11.0)
        elapsed = time.monotonic() - started
        hung = worker.is_alive()
        # Leaving the proxy's context stops the drip, which ends a hung call too.
    assert proxy.faults("drip")
    assert not hung, f"the call was still reading after {elapsed:.0f}s against a 4 s budget"
    assert outcome
    assert outcome[0] is not None  # it failed (the answer never completed in time)
    assert records[-1].outcome == "failed"


def _every_kind(decide: Decide) -> Decide:
    """`decide` (which requests meet a fault), with the kinds dealt in turn (reset, stall,
    cut, reset, …) so that a storm of a few dozen faults meets every kind whatever the
    offsets paging asks for (pages fetched ahead ask for other offsets than one at a time)."""
    kinds = ("reset", "stall", "cut")
    dealt: dict[tuple[str, str], str] = {}
    lock = threading.Lock()

    def deal(method: str, target: str, attempt: int) -> str | None:
        if decide(method, target, attempt) is None:
            return None
        with lock:
            return dealt.setdefault((method, target), kinds[len(dealt) % len(kinds)])

    return deal
