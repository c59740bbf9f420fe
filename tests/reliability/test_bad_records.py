"""Bad records: a record missing `id` (or with an unusable one, or not an object), a float or
string amount, an unknown currency, an unknown status. Pass: the run does not crash; each one
the sandbox planted is flagged by a check (`findings`) with its raw record kept, and each
unkeyable one injected into a page is in `rejects`, whole — none is dropped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from recon.night import nightly as steps
from recon.sandbox.app import SandboxConfig, create_app
from recon.sandbox.server import serve_app_in_thread

from .conftest import KEY, TOKEN, overrides_for, read_only, truth_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BAD_KINDS = ("non_integer", "float_amount", "string_amount", "invalid_currency", "unknown_status")
UNKEYABLE: list[Any] = [
    {"amountMinor": 100, "currency": "EUR", "status": "confirmed", "reference": "no-id"},
    {"id": None, "amountMinor": 100, "currency": "EUR", "status": "confirmed"},
    {"id": 12345, "amountMinor": 100, "currency": "EUR", "status": "confirmed"},
    {"id": "", "amountMinor": 100, "currency": "EUR", "status": "confirmed"},
    "not-an-object",
    [1, 2, 3],
]


class InjectUnkeyable:
    """ASGI wrapper: adds the UNKEYABLE records to the first page of payments and refunds."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        query = (
            scope.get("query_string", b"").decode().split("&") if scope["type"] == "http" else []
        )
        if (
            scope["type"] != "http"
            or scope["path"]
            not in (
                "/api/v1/payments",
                "/api/v1/refunds",
            )
            or "skip=0" not in query
        ):
            await self.inner(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            else:
                chunks.append(message.get("body", b""))

        await self.inner(scope, receive, capture)
        body = b"".join(chunks)
        if start["status"] == 200:
            doc = orjson.loads(body)
            doc["data"] = [*doc["data"], *UNKEYABLE]
            body = orjson.dumps(doc)
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def test_bad_records_are_flagged_or_rejected_never_dropped(tmp_path: Path) -> None:
    app = create_app(SandboxConfig(seed=13, payments=1500, api_key=KEY, bearer_token=TOKEN))
    with serve_app_in_thread(InjectUnkeyable(app)) as url:
        summary = steps.run_local(overrides_for(tmp_path, url))
        truth = truth_of(url)
    assert summary.exit_code in (steps.EXIT_COMPLETE, steps.EXIT_INCOMPLETE)  # never a crash
    assert summary.status == "complete"
    con = read_only(summary.db_path)

    # Every planted bad value is flagged by the check the truth names, and kept raw.
    planted = [
        p
        for p in truth["planted"]
        if any(k in p["kind"] for k in BAD_KINDS) or p["kind"].endswith("unknown_status")
    ]
    kinds = {p["kind"] for p in planted}
    assert {"payment_float_amount", "payment_string_amount", "payment_invalid_currency"} <= kinds
    assert {"payment_unknown_status", "refund_non_integer_amount"} <= kinds
    found = {
        (c, e, i)
        for c, e, i in con.execute(
            "SELECT check_name, entity_id, issue_type FROM findings WHERE run_id = ?",
            [summary.run_id],
        ).fetchall()
    }
    missing = [p for p in planted if (p["check"], p["entity_id"], p["issue_type"]) not in found]
    assert not missing, missing[:5]
    for p in planted:
        table = {
            "payment": "payments",
            "refund": "refunds",
            "dispute": "disputes",
            "invoice": "invoices",
            "subscription": "subscriptions",
            "payment_intent": "payment_intents",
        }[p["entity"]]
        raw = con.execute(f"SELECT raw FROM {table} WHERE id = ?", [p["entity_id"]]).fetchone()
        assert raw is not None, p  # the record itself is in the warehouse, raw intact
        assert json.loads(raw[0])["id"] == p["entity_id"]

    # Every unkeyable record is in rejects, whole, for both resources.
    rejects = con.execute(
        "SELECT resource, raw, reason, request_id FROM rejects WHERE run_id = ?",
        [summary.run_id],
    ).fetchall()
    for resource in ("payments", "refunds"):
        kept = sorted(orjson.dumps(json.loads(r[1])) for r in rejects if r[0] == resource)
        assert kept == sorted(orjson.dumps(u) for u in UNKEYABLE), resource
    assert all(r[2] for r in rejects)  # with a reason
    assert all(r[3] for r in rejects)  # and the request id of the page they came in
    counts = dict(
        con.execute(
            "SELECT resource, records FROM resource_scans WHERE run_id = ?", [summary.run_id]
        ).fetchall()
    )
    assert counts["payments"] == truth["counts"]["payments"]
