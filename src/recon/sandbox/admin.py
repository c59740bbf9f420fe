"""The undocumented helpers under ``/_sandbox`` (no auth, no faults) and the OpenAPI routes."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from recon.errors import ApiError
from recon.sandbox.auth import check_auth
from recon.sandbox.envelope import JSON, envelope, error_envelope
from recon.sandbox.openapi import cached_openapi_dict, openapi_text
from recon.sandbox.params import json_body
from recon.sandbox.state import SandboxState

__all__ = ["admin_routes", "faults_changes"]

# JSON key of POST /_sandbox/faults → (keyword of SandboxState.set_faults, accepted types,
# lowest value, whether null is accepted)
_FAULT_KEYS: dict[str, tuple[str, tuple[type, ...], float | None, bool]] = {
    "enabled": ("enabled", (bool,), None, False),
    "profile": ("profile", (str,), None, False),
    "storm": ("storm", (int,), 0, False),
    "capAfter": ("cap_after", (int,), 0, True),
    "capTo": ("cap_to", (int,), 1, False),
    "shifts": ("shifts", (list,), None, False),
    "delays": ("delays", (list,), None, False),
    "poison": ("poison", (list,), None, False),
    "latencyMs": ("latency_ms", (int, float), 0, False),
    "latencyJitterMs": ("latency_jitter_ms", (int, float), 0, False),
    "rate": ("rate", (int, float), None, True),
    "burst": ("burst", (int,), 1, True),
    "maxInFlight": ("max_in_flight", (int,), 1, True),
}


def faults_changes(body: dict[str, Any]) -> dict[str, Any]:
    """The keywords of ``SandboxState.set_faults`` from a ``POST /_sandbox/faults`` body."""
    changes: dict[str, Any] = {}
    for key, value in body.items():
        if key not in _FAULT_KEYS:
            raise ValueError(f"unknown key {key!r}; known: {', '.join(_FAULT_KEYS)}")
        name, types, lowest, nullable = _FAULT_KEYS[key]
        if value is None and nullable:
            changes[name] = None
            continue
        is_bool = isinstance(value, bool)
        if not isinstance(value, types) or (is_bool and bool not in types):
            raise ValueError(f"{key} has the wrong type")
        if lowest is not None and isinstance(value, int | float) and value < lowest:
            raise ValueError(f"{key} must be >= {lowest:g}")
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise ValueError(f"{key} must be a list of strings")
        changes[name] = value
    return changes


def admin_routes(state: SandboxState) -> list[Route]:
    """Truth, state, fixtures, present ids, reset, health; the OpenAPI document."""

    def rid_header() -> dict[str, str]:
        return {"X-Request-Id": state.request_id()}

    async def truth_ep(request: Request) -> Response:
        # computed on first use (1M payments: about 40 s of CPU), in a worker thread so that
        # the event loop goes on answering the API meanwhile
        body = await run_in_threadpool(state.truth)
        return Response(body, media_type=JSON, headers=rid_header())

    async def state_ep(request: Request) -> Response:
        return Response(orjson.dumps(state.state_json()), media_type=JSON, headers=rid_header())

    async def fixtures_ep(request: Request) -> Response:
        return Response(orjson.dumps(state.fixtures_json()), media_type=JSON, headers=rid_header())

    async def present_ep(request: Request) -> Response:
        """Ids of a list resource present from start to end (generated and never deleted)."""
        resource = request.query_params.get("resource", "payments")
        view = state.lists.get(resource)
        if view is None:
            return envelope(404, "not_found", "no such list resource", state.request_id())
        with state.lock:
            deleted = set(view.deleted_set)
            ids = [
                orjson.loads(rec)["id"]
                for k, rec in enumerate(view.base_records(0, view.base_count))
                if k not in deleted
            ]
        return Response(
            orjson.dumps({"resource": resource, "ids": ids}),
            media_type=JSON,
            headers=rid_header(),
        )

    async def faults_ep(request: Request) -> Response:
        """GET: the faults and pacing in force. POST (with the API key): switch them."""
        if request.method == "POST":
            rid = state.request_id()
            refused = check_auth(request, "K", state.config)
            if refused is not None:
                return envelope(401, "unauthorized", refused, rid)
            try:
                changes = faults_changes(await json_body(request))
                shown = state.set_faults(**changes)
            except ApiError as err:
                return error_envelope(err, rid)
            except ValueError as err:
                return envelope(400, "invalid_request", str(err), rid)
            return Response(orjson.dumps(shown), media_type=JSON, headers={"X-Request-Id": rid})
        return Response(orjson.dumps(state.faults_json()), media_type=JSON, headers=rid_header())

    async def reset_ep(request: Request) -> Response:
        state.reset()
        return Response(b'{"reset":true}', media_type=JSON, headers=rid_header())

    async def health_ep(request: Request) -> Response:
        return Response(b'{"ok":true}', media_type=JSON, headers=rid_header())

    spec_text = openapi_text()

    async def openapi_yaml(request: Request) -> Response:
        return Response(spec_text, media_type="application/yaml", headers=rid_header())

    spec_json = orjson.dumps(cached_openapi_dict())

    async def openapi_json(request: Request) -> Response:
        return Response(spec_json, media_type=JSON, headers=rid_header())

    return [
        Route("/_sandbox/truth", truth_ep, methods=["GET"]),
        Route("/_sandbox/state", state_ep, methods=["GET"]),
        Route("/_sandbox/fixtures", fixtures_ep, methods=["GET"]),
        Route("/_sandbox/present", present_ep, methods=["GET"]),
        Route("/_sandbox/faults", faults_ep, methods=["GET", "POST"]),
        Route("/_sandbox/reset", reset_ep, methods=["POST"]),
        Route("/_sandbox/health", health_ep, methods=["GET"]),
        Route("/openapi.yaml", openapi_yaml, methods=["GET"]),
        Route("/api/v1/openapi.json", openapi_json, methods=["GET"]),
    ]
