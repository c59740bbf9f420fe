"""Helpers for the contract (in-process) and integration (real server) tests."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import SecretStr

from recon.api import ApiClient, CallRecord, ClientConfig, Page, ScanReport
from recon.sandbox.data import LIST_RESOURCES  # the lists the sandbox serves


@dataclass
class ScanResult:
    ids: list[str] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)
    report: ScanReport | None = None

    @property
    def id_set(self) -> set[str]:
        return set(self.ids)


def sandbox_client(
    base_url: str,
    records: list[CallRecord],
    *,
    transport: httpx.BaseTransport | None = None,
    api_key: str | None = None,
    bearer_token: str | None = None,
    on_attempt: Callable[[CallRecord], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    **overrides: Any,
) -> ApiClient:
    from recon.sandbox.credentials import DEMO_API_KEY, DEMO_BEARER_TOKEN

    config = ClientConfig.for_base_url(
        base_url,
        api_key=SecretStr(api_key or DEMO_API_KEY),
        bearer_token=SecretStr(bearer_token or DEMO_BEARER_TOKEN),
        backoff_initial_s=0.01,
        backoff_max_s=0.05,
        **overrides,
    )
    return ApiClient(
        config,
        transport=transport,
        on_attempt=on_attempt or records.append,
        clock=clock,
        sleep=sleep,
    )


def scan_all(client: ApiClient, resources: Iterable[str] = LIST_RESOURCES) -> dict[str, ScanResult]:
    out: dict[str, ScanResult] = {}
    for resource in resources:
        scan = client.scan(resource)
        result = ScanResult()
        for page in scan:
            result.pages.append(page)
            result.ids.extend(r["id"] for r in page.records)
        result.report = scan.report
        out[resource] = result
    return out


def assert_no_duplicates(results: dict[str, ScanResult]) -> None:
    for resource, result in results.items():
        dupes = [i for i, n in Counter(result.ids).items() if n > 1]
        assert not dupes, f"{resource}: returned twice: {dupes[:5]}"


def assert_call_log_complete(records: list[CallRecord]) -> None:
    """Every attempt that did not succeed is logged with its request id (HTTP answers)."""
    assert records
    for record in records:
        assert record.outcome in ("ok", "retry", "failed")
        if record.outcome != "ok":
            assert record.error, record
            if record.http_status is not None:
                assert record.request_id, f"no request id: {record}"
    by_call: dict[str, list[CallRecord]] = {}
    for record in records:
        by_call.setdefault(record.call_id, []).append(record)
    for attempts in by_call.values():
        assert [a.attempt for a in attempts] == list(range(1, len(attempts) + 1))
        assert all(a.outcome == "retry" for a in attempts[:-1])
