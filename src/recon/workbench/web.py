"""What the workbench's API (recon.workbench.api) and pages (recon.workbench.pages) share:
`Web` (the service, the users and their sessions, the saved views, the templates) with the
wrappers that check a request first — a session (401, or the login page), the CSRF token on
every change (403) and the service's refusals as their statuses — and the JSON answers.
`recon.workbench.app` puts them together into the starlette application.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from recon.errors import ConfigError, ReconError
from recon.workbench.base import Outcome
from recon.workbench.config import WorkbenchSettings
from recon.workbench.queue import BadFilter
from recon.workbench.rules import Actor, Conflict, Forbidden, Invalid, NotFound
from recon.workbench.service import Workbench
from recon.workbench.sessions import LoginLimiter, Session, Sessions
from recon.workbench.users import UserStore, users_path
from recon.workbench.views import ViewStore, views_path

__all__ = ["COOKIE", "HERE", "Handler", "Web", "error", "json"]

HERE = Path(__file__).parent
COOKIE = "recon_session"
_SAFE = ("GET", "HEAD", "OPTIONS")
Handler = Callable[[Request, Session], Awaitable[Response]]


def _money(amount: int | None, currency: str | None) -> str:
    """An amount for people: with its currency's exponent, never through a float."""
    from recon.money.currency import format_minor, is_iso4217

    if amount is None:
        return "—"
    if currency is None or not is_iso4217(currency):
        return f"{currency or '?'} {amount:,} (minor units)"
    return format_minor(int(amount), currency)


def json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(data), status_code=status, media_type="application/json", headers=headers
    )


def error(status: int, message: str) -> Response:
    return json({"error": message}, status)


class Web:
    """What the API's and the pages' handlers share: the service, the users and their
    sessions, the saved views, the templates; the wrappers that check a request first."""

    def __init__(
        self, db: Path, settings: WorkbenchSettings, *, reports: Path, secure_cookie: bool
    ) -> None:
        self.bench = Workbench(db, settings)
        self.users = UserStore(users_path(db))
        self.views = ViewStore(views_path(db))
        self.sessions = Sessions(settings.session_hours)
        self.limiter = LoginLimiter()
        self.reports = reports
        self.secure_cookie = secure_cookie
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
        )
        self.templates.filters["q"] = lambda v: quote(str(v), safe="")
        self.templates.filters["money"] = _money

    def session_of(self, request: Request) -> Session | None:
        session = self.sessions.get(request.cookies.get(COOKIE))
        if session is None:
            return None
        user = self.users.get(session.user)
        if user is None or user.disabled or user.role != session.role:
            self.sessions.end(session.token)  # disabled or changed: log in again
            return None
        return session

    def api(
        self, handler: Handler, *, write: bool = False
    ) -> Callable[[Request], Awaitable[Response]]:
        """An API endpoint: a session (401), the CSRF token on a change (403), and the
        service's refusals as their statuses, one JSON line each."""

        async def endpoint(request: Request) -> Response:
            session = self.session_of(request)
            if session is None:
                return error(401, "log in first: POST /api/v1/session")
            if write or request.method not in _SAFE:
                token = request.headers.get("x-csrf-token", "")
                if not secrets.compare_digest(token.encode(), session.csrf.encode()):
                    return error(403, "missing or wrong X-CSRF-Token")
            try:
                return await handler(request, session)
            except Forbidden as exc:
                return error(403, str(exc))
            except NotFound as exc:
                return error(404, str(exc))
            except (Invalid, BadFilter, ConfigError) as exc:
                return error(400, str(exc))
            except Conflict as exc:
                return error(409, str(exc))
            except ReconError as exc:
                return error(503, str(exc))

        return endpoint

    def page(self, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        """A page: a session (else to the login), the service's refusals as an error page."""

        async def endpoint(request: Request) -> Response:
            session = self.session_of(request)
            if session is None:
                return RedirectResponse(f"/login?next={quote(request.url.path)}", 303)
            try:
                return await handler(request, session)
            except Forbidden as exc:
                return self.render("error.html", session, status=403, message=str(exc))
            except NotFound as exc:
                return self.render("error.html", session, status=404, message=str(exc))
            except (BadFilter, Invalid, ConfigError) as exc:
                return self.render("error.html", session, status=400, message=str(exc))
            except ReconError as exc:
                return self.render("error.html", session, status=503, message=str(exc))

        return endpoint

    def render(self, name: str, session: Session | None, **values: Any) -> HTMLResponse:
        html = self.templates.get_template(name).render(
            me=session, csrf=session.csrf if session else "", **values
        )
        return HTMLResponse(html, status_code=int(values.get("status", 200)))

    @staticmethod
    async def body(request: Request) -> dict[str, Any]:
        """The request's JSON object (Invalid otherwise)."""
        try:
            data = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            raise Invalid("the body must be a JSON object") from None
        if not isinstance(data, dict):
            raise Invalid("the body must be a JSON object")
        return data

    @staticmethod
    def actor(session: Session) -> Actor:
        return Actor(session.user, session.role)

    @staticmethod
    def outcome(result: Outcome) -> Response:
        """200 `{"applied": true}`; 202 `{"proposal"}`; 200 `{"applied": false, "already"}`
        when it only repeated what stands."""
        if result.applied:
            return json({"applied": True})
        if result.proposal is not None:
            body: dict[str, Any] = {"proposal": result.proposal}
            if result.already:
                body["already"] = result.already
            return json(body, 202)
        return json({"applied": False, "already": result.already})
