"""The sandbox Merchant Payments API as a Starlette (ASGI) app.

``create_app(SandboxConfig(...))`` builds it; every assumption where the spec is silent is
written down in docs/sandbox.md. The way of a request is in ``endpoint``, the operations in
``operations``, what the sandbox knows in ``state``.
"""

from __future__ import annotations

import threading

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from recon.sandbox.admin import admin_routes
from recon.sandbox.config import DEMO_API_KEY, DEMO_BEARER_TOKEN, SandboxConfig
from recon.sandbox.data import PAYMENT_STATUSES
from recon.sandbox.endpoint import Endpoint, dispatch, endpoint
from recon.sandbox.envelope import envelope
from recon.sandbox.openapi import openapi_dict, openapi_text
from recon.sandbox.operations import OPERATIONS, PREFIX
from recon.sandbox.state import SandboxState

__all__ = [
    "DEMO_API_KEY",
    "DEMO_BEARER_TOKEN",
    "PAYMENT_STATUSES",
    "SandboxConfig",
    "SandboxState",
    "create_app",
    "openapi_dict",
    "openapi_text",
]

_ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"]


def create_app(config: SandboxConfig | None = None) -> Starlette:
    """The sandbox as an ASGI app (state on ``app.state.sandbox``)."""
    cfg = config if config is not None else SandboxConfig()
    state = SandboxState(cfg)

    by_path: dict[str, dict[str, Endpoint]] = {}
    for method, path, op in OPERATIONS:
        by_path.setdefault(PREFIX + path, {})[method] = endpoint(op, state)
    routes = [
        Route(path, dispatch(state, methods), methods=_ALL_METHODS)
        for path, methods in by_path.items()
    ]
    routes += admin_routes(state)

    async def http_error(request: Request, exc: Exception) -> Response:
        rid = state.request_id()
        code = exc.status_code if isinstance(exc, HTTPException) else 500
        if code == 405:
            allow = (getattr(exc, "headers", None) or {}).get("Allow", "")
            return envelope(
                405, "method_not_allowed", "method not allowed on this path", rid, Allow=allow
            )
        if code == 404:
            return envelope(404, "not_found", "no such operation", rid)
        return envelope(code, "error", "request failed", rid)

    async def server_error(request: Request, exc: Exception) -> Response:
        return envelope(500, "internal_error", "internal error", state.request_id())

    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: http_error, Exception: server_error},
    )
    app.state.sandbox = state
    if cfg.prewarm == "sync":
        state.prewarm()
    elif cfg.prewarm == "background":
        threading.Thread(target=state.prewarm, name="recon-sandbox-prewarm", daemon=True).start()
    return app
