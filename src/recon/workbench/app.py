"""The workbench's web application (starlette): the JSON API under /api/v1
(recon.workbench.api) and the pages that use it (recon.workbench.pages: server-rendered by
jinja2 with autoescape, a little plain JS, no build step). Both act through the one service
(recon.workbench.service).

Security, every request: the session in an HttpOnly SameSite=Strict cookie (Secure under
TLS); an `X-CSRF-Token` equal to the session's on every state change (403 otherwise); 401
without a session; 403 for a role that may not act; a Content-Security-Policy allowing only
the server's own scripts and styles; no error ever shows a traceback (one JSON line).
"""

from __future__ import annotations

import logging
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from recon.workbench.api import api_routes
from recon.workbench.config import WorkbenchSettings
from recon.workbench.pages import page_routes
from recon.workbench.web import HERE, Web, error

__all__ = ["CSP", "create_app"]

log = logging.getLogger("recon.workbench")
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


class _Headers(BaseHTTPMiddleware):
    """The security headers on every response."""

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response


def create_app(
    db: Path,
    settings: WorkbenchSettings,
    *,
    reports: Path,
    secure_cookie: bool = False,
    allowed_hosts: list[str] | None = None,
) -> Starlette:
    """The workbench on warehouse `db` (its trail, users and views beside it). With
    `allowed_hosts`, a request naming another Host is refused (400): a page of another site
    that rebinds its DNS name to 127.0.0.1 cannot reach the API."""
    web = Web(db, settings, reports=reports, secure_cookie=secure_cookie)
    web.bench.snapshot.current()  # start building the queue's snapshot now

    async def not_found(request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/"):
            return error(404, "no such endpoint")
        return HTMLResponse("not found", 404)

    async def server_error(request: Request, exc: Exception) -> Response:
        log.error("workbench: %s on %s", type(exc).__name__, request.url.path)
        return error(500, "internal error (logged on the server)")

    routes = [
        *page_routes(web),
        *api_routes(web),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(_Headers),
            *(
                [Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)]
                if allowed_hosts
                else []
            ),
        ],
        exception_handlers={404: not_found, 500: server_error},
    )
