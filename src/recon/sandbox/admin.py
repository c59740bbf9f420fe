"""The undocumented helpers under ``/_sandbox`` (no auth, no faults) and the OpenAPI routes."""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from recon.sandbox.envelope import JSON, envelope
from recon.sandbox.openapi import cached_openapi_dict, openapi_text
from recon.sandbox.state import SandboxState

__all__ = ["admin_routes"]


def admin_routes(state: SandboxState) -> list[Route]:
    """Truth, state, fixtures, present ids, reset, health; the OpenAPI document."""

    def rid_header() -> dict[str, str]:
        return {"X-Request-Id": state.request_id()}

    async def truth_ep(request: Request) -> Response:
        return Response(state.truth(), media_type=JSON, headers=rid_header())

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
        Route("/_sandbox/reset", reset_ep, methods=["POST"]),
        Route("/_sandbox/health", health_ep, methods=["GET"]),
        Route("/openapi.yaml", openapi_yaml, methods=["GET"]),
        Route("/api/v1/openapi.json", openapi_json, methods=["GET"]),
    ]
