"""Garbage 2xx: HTML from a proxy, an empty body, JSON without `data`, `data` not a list.

Never read as "empty list, end of data": at the run level a page that keeps answering
garbage leaves its resource `incomplete` (exit 3, the call in failed_calls) — never
`complete` with fewer records; garbage that goes away on a retry costs nothing (all records).
The client-level rule: tests/api/test_errors.py
(`test_garbage_2xx_is_retried_then_fails_never_empty`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recon.night import nightly as steps
from recon.sandbox.app import SandboxConfig, create_app
from recon.sandbox.server import serve_app_in_thread

from .conftest import KEY, TOKEN, overrides_for, read_only, truth_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]

GARBAGE: dict[str, tuple[bytes, bytes]] = {
    "html": (b"text/html", b"<html><body><h1>502 Bad Gateway</h1>nginx</body></html>"),
    "empty": (b"application/json", b""),
    "no_data": (b"application/json", b'{"hasMore": false, "nextOffset": null}'),
    "data_not_list": (b"application/json", b'{"data": {"id": "x"}, "hasMore": false}'),
    "data_null": (b"application/json", b'{"data": null, "hasMore": false}'),
}
PATHS = {
    "payments": "/api/v1/payments",
    "invoices": "/api/v1/invoices",
    "refunds": "/api/v1/refunds",
    "disputes": "/api/v1/disputes",
    "payment_intents": "/api/v1/payment-intents",
}


class GarbageProxy:
    """ASGI wrapper: the first page after the first one of each chosen list answers garbage
    (every time, or only on its first attempt)."""

    def __init__(self, inner: Any, kinds: dict[str, str], *, always: bool) -> None:
        self.inner, self.kinds, self.always = inner, kinds, always
        self.poisoned: dict[str, str] = {}  # path -> the query string that gets garbage
        self.served: dict[str, int] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path, query = scope["path"], scope["query_string"].decode()
            for resource, kind in self.kinds.items():
                if path != PATHS[resource] or "skip=0" in query.split("&"):
                    continue
                target = self.poisoned.setdefault(path, query)
                if query != target:
                    continue
                n = self.served.get(path, 0)
                self.served[path] = n + 1
                if self.always or n == 0:
                    ctype, body = GARBAGE[kind]
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 200,
                            "headers": [(b"content-type", ctype), (b"x-request-id", b"req_junk")],
                        }
                    )
                    await send({"type": "http.response.body", "body": body})
                    return
        await self.inner(scope, receive, send)


def _run(tmp_path: Path, kinds: dict[str, str], *, always: bool) -> tuple[Any, dict[str, Any]]:
    app = create_app(SandboxConfig(seed=12, payments=1200, api_key=KEY, bearer_token=TOKEN))
    with serve_app_in_thread(GarbageProxy(app, kinds, always=always)) as url:
        summary = steps.run_local(overrides_for(tmp_path, url))
        truth = truth_of(url)
    return summary, truth


@pytest.mark.parametrize("resource", ["payments", "invoices"])
@pytest.mark.parametrize("kind", list(GARBAGE))
def test_garbage_2xx_for_good_leaves_the_resource_incomplete(
    tmp_path: Path, kind: str, resource: str
) -> None:
    summary, truth = _run(tmp_path, {resource: kind}, always=True)
    assert (summary.status, summary.exit_code) == ("incomplete", steps.EXIT_INCOMPLETE)
    con = read_only(summary.db_path)
    scans = dict(
        con.execute(
            "SELECT resource, status FROM resource_scans WHERE run_id = ?", [summary.run_id]
        ).fetchall()
    )
    assert scans[resource] == "incomplete"  # never "complete" with fewer records
    others = {r: s for r, s in scans.items() if r != resource}
    assert set(others.values()) == {"complete"}, others
    failed = con.execute(
        "SELECT resource, error, request_id FROM failed_calls WHERE run_id = ?",
        [summary.run_id],
    ).fetchall()
    assert (resource, "invalid_body", "req_junk") in failed
    landed = con.execute(f"SELECT count(*) FROM {resource}").fetchone()
    assert landed is not None
    assert landed[0] < truth["counts"][resource]  # short, and said so


def test_garbage_2xx_once_is_retried_and_costs_nothing(tmp_path: Path) -> None:
    kinds = dict(zip(PATHS, GARBAGE, strict=True))  # a different kind on each list
    summary, truth = _run(tmp_path, kinds, always=False)
    assert (summary.status, summary.exit_code) == ("complete", steps.EXIT_COMPLETE)
    con = read_only(summary.db_path)
    for resource in PATHS:
        n = con.execute(f"SELECT count(*), count(DISTINCT id) FROM {resource}").fetchone()
        assert n == (truth["counts"][resource],) * 2, resource
    retried = con.execute(
        "SELECT count(*) FROM api_calls WHERE run_id = ? AND error = 'invalid_body' "
        "AND outcome = 'retry'",
        [summary.run_id],
    ).fetchone()
    assert retried == (len(PATHS),)
