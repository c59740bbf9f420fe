"""The workbench's web application (starlette): the JSON API under /api/v1 and the pages
that use it (server-rendered by jinja2 with autoescape, a little plain JS, no build step).

Security, every request: the session in an HttpOnly SameSite=Strict cookie (Secure under
TLS); an `X-CSRF-Token` equal to the session's on every state change (403 otherwise); 401
without a session; 403 for a role that may not act; a Content-Security-Policy allowing only
the server's own scripts and styles; no error ever shows a traceback (one JSON line).
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from recon.errors import ConfigError, ReconError
from recon.workbench.config import WorkbenchSettings
from recon.workbench.queue import BadFilter, QueueFilters
from recon.workbench.service import (
    Actor,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    Outcome,
    Workbench,
)
from recon.workbench.sessions import LoginLimiter, Session, Sessions
from recon.workbench.users import UserStore, users_path

__all__ = ["COOKIE", "CSP", "create_app"]

log = logging.getLogger("recon.workbench")
HERE = Path(__file__).parent
COOKIE = "recon_session"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_SAFE = ("GET", "HEAD", "OPTIONS")
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,39}")


class _Unauthenticated(Exception):
    pass


def _money(amount: int | None, currency: str | None) -> str:
    """An amount for people: with its currency's exponent, never through a float."""
    from recon.money.currency import format_minor, is_iso4217

    if amount is None:
        return "—"
    if currency is None or not is_iso4217(currency):
        return f"{currency or '?'} {amount:,} (minor units)"
    return format_minor(int(amount), currency)


def _json(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")


def _error(status: int, message: str) -> Response:
    return _json({"error": message}, status)


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
    """The workbench on warehouse `db` (its trail and users file beside it). With
    `allowed_hosts`, a request naming another Host is refused (400): a page of another site
    that rebinds its DNS name to 127.0.0.1 cannot reach the API."""
    bench = Workbench(db, settings)
    bench.snapshot.current()  # start building the queue's snapshot now
    users = UserStore(users_path(db))
    sessions = Sessions(settings.session_hours)
    limiter = LoginLimiter()
    pages = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    pages.filters["q"] = lambda v: quote(str(v), safe="")
    pages.filters["money"] = _money

    def session_of(request: Request) -> Session | None:
        session = sessions.get(request.cookies.get(COOKIE))
        if session is None:
            return None
        user = users.get(session.user)
        if user is None or user.disabled or user.role != session.role:
            sessions.end(session.token)  # disabled or changed: log in again
            return None
        return session

    def api(
        handler: Callable[[Request, Session], Awaitable[Response]], *, write: bool = False
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            session = session_of(request)
            if session is None:
                return _error(401, "log in first: POST /api/v1/session")
            if write or request.method not in _SAFE:
                token = request.headers.get("x-csrf-token", "")
                if not secrets.compare_digest(token.encode(), session.csrf.encode()):
                    return _error(403, "missing or wrong X-CSRF-Token")
            try:
                return await handler(request, session)
            except Forbidden as exc:
                return _error(403, str(exc))
            except NotFound as exc:
                return _error(404, str(exc))
            except (Invalid, BadFilter) as exc:
                return _error(400, str(exc))
            except Conflict as exc:
                return _error(409, str(exc))
            except ConfigError as exc:
                return _error(400, str(exc))
            except ReconError as exc:
                return _error(503, str(exc))

        return endpoint

    async def body(request: Request) -> dict[str, Any]:
        try:
            data = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            raise Invalid("the body must be a JSON object") from None
        if not isinstance(data, dict):
            raise Invalid("the body must be a JSON object")
        return data

    def actor(session: Session) -> Actor:
        return Actor(session.user, session.role)

    def outcome(result: Outcome) -> Response:
        if result.applied:
            return _json({"applied": True})
        return _json({"proposal": result.proposal}, 202)

    # -- session -------------------------------------------------------------------------

    async def login(request: Request) -> Response:
        try:
            data = await body(request)
        except Invalid as exc:
            return _error(400, str(exc))
        name, password = data.get("user"), data.get("password")
        if not isinstance(name, str) or not isinstance(password, str):
            return _error(400, 'send {"user": …, "password": …}')
        client = f"ip:{request.client.host if request.client else '?'}"
        known = name if _NAME.fullmatch(name) else "invalid-name"
        wait = limiter.wait(f"user:{known}", client)
        if wait:
            return Response(
                orjson.dumps({"error": "too many failed logins: try again later"}),
                status_code=429,
                media_type="application/json",
                headers={"Retry-After": str(wait)},
            )
        user = await run_in_threadpool(users.authenticate, name, password)
        await run_in_threadpool(
            bench.trail.record,
            "login",
            {"ok": user is not None, "client": client},
            note=None,
            who=known,
        )
        if user is None:
            limiter.failed(f"user:{known}", client)
            return _error(401, "wrong user name or password")
        limiter.succeeded(f"user:{known}")
        session = sessions.start(user.name, user.role)
        response = _json({"user": user.name, "role": user.role, "csrf": session.csrf})
        response.set_cookie(
            COOKIE,
            session.token,
            max_age=int(sessions.seconds),
            httponly=True,
            samesite="strict",
            secure=secure_cookie,
            path="/",
        )
        return response

    async def whoami(request: Request, session: Session) -> Response:
        return _json({"user": session.user, "role": session.role, "csrf": session.csrf})

    async def logout(request: Request, session: Session) -> Response:
        sessions.end(session.token)
        response = _json({"ended": True})
        response.delete_cookie(COOKIE, path="/")
        return response

    async def session_route(request: Request) -> Response:
        if request.method == "POST":
            return await login(request)
        if request.method == "DELETE":
            return await api(logout, write=True)(request)
        return await api(whoami)(request)

    # -- findings ------------------------------------------------------------------------

    async def findings(request: Request, session: Session) -> Response:
        query = dict(request.query_params)
        filters = QueueFilters.from_query(query)
        try:
            limit = int(query.get("limit") or 50)
        except ValueError:
            raise Invalid("limit must be a whole number") from None
        page = await run_in_threadpool(bench.queue, filters, limit, query.get("cursor") or None)
        items = [{k: v for k, v in i.items() if k not in ("detail",)} for i in page.items]
        return _json({"items": items, "next": page.next})

    async def finding(request: Request, session: Session) -> Response:
        return _json(await run_in_threadpool(bench.finding, request.path_params["key"]))

    async def groups(request: Request, session: Session) -> Response:
        return _json({"groups": await run_in_threadpool(bench.groups)})

    async def act(request: Request, session: Session) -> Response:
        key, verb = request.path_params["key"], request.path_params["verb"]
        data = await body(request)
        who = actor(session)
        if verb == "assign":
            result = await run_in_threadpool(
                bench.assign, who, key, data.get("owner"), data.get("note")
            )
        elif verb == "comment":
            result = await run_in_threadpool(bench.comment, who, key, data.get("note"))
        elif verb == "resolve":
            result = await run_in_threadpool(
                bench.resolve, who, key, data.get("reason"), data.get("note")
            )
        elif verb == "accept":
            result = await run_in_threadpool(bench.accept_suggestion, who, key, data.get("note"))
        else:
            raise NotFound(f"no action {verb}")
        return outcome(result)

    async def bulk(request: Request, session: Session) -> Response:
        data = await body(request)
        raw = data.get("filters") or {}
        if not isinstance(raw, dict):
            raise Invalid("filters must be an object of the queue's filters")
        filters = QueueFilters.from_query({str(k): str(v) for k, v in raw.items()})
        preview = bool(data.get("preview"))
        result = await run_in_threadpool(
            lambda: bench.bulk(actor(session), filters, data, preview=preview)
        )
        return _json(result)

    async def undo(request: Request, session: Session) -> Response:
        data = await body(request)
        count = await run_in_threadpool(
            bench.undo_batch, actor(session), request.path_params["batch"], data.get("note")
        )
        return _json({"undone": count})

    async def matches(request: Request, session: Session) -> Response:
        data = await body(request)
        result = await run_in_threadpool(
            bench.propose_match,
            actor(session),
            data.get("order"),
            data.get("payments"),
            data.get("note"),
        )
        return outcome(result)

    async def proposals(request: Request, session: Session) -> Response:
        state = request.query_params.get("state", "pending")
        if state not in ("pending", "approved", "rejected", "all"):
            raise Invalid("state must be pending, approved, rejected or all")
        found = await run_in_threadpool(bench.proposals, None if state == "all" else state)
        return _json({"items": found})

    async def decide(request: Request, session: Session) -> Response:
        pid, verb = request.path_params["pid"], request.path_params["verb"]
        data = await body(request)
        if verb == "approve":
            result = await run_in_threadpool(bench.approve, actor(session), pid, data.get("note"))
        elif verb == "reject":
            result = await run_in_threadpool(bench.reject, actor(session), pid, data.get("note"))
        else:
            raise NotFound(f"no decision {verb}")
        return _json({"applied": result.applied, "proposal": result.proposal})

    async def trail(request: Request, session: Session) -> Response:
        key = request.query_params.get("finding_key") or None
        return _json({"lines": await run_in_threadpool(bench.trail_lines, key)})

    async def close_figures(request: Request, session: Session) -> Response:
        return _json(await run_in_threadpool(bench.close_view, request.path_params["period"]))

    async def sign_off(request: Request, session: Session) -> Response:
        data = await body(request)
        await run_in_threadpool(
            bench.sign_off,
            actor(session),
            request.path_params["period"],
            data.get("note"),
            reports,
            provisional=data.get("provisional") is True,
        )
        return _json({"applied": True})

    async def pack(request: Request, session: Session) -> Response:
        period = request.path_params["period"]
        path = await run_in_threadpool(bench.pack, period, reports)
        return FileResponse(path, filename=f"close-{path.parent.name.removeprefix('close-')}.xlsx")

    # -- pages ---------------------------------------------------------------------------

    def render(name: str, session: Session | None, **values: Any) -> HTMLResponse:
        html = pages.get_template(name).render(
            me=session, csrf=session.csrf if session else "", **values
        )
        return HTMLResponse(html, status_code=int(values.get("status", 200)))

    def page(
        handler: Callable[[Request, Session], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            session = session_of(request)
            if session is None:
                return RedirectResponse(f"/login?next={quote(request.url.path)}", 303)
            try:
                return await handler(request, session)
            except (BadFilter, Invalid, ConfigError) as exc:
                return render("error.html", session, status=400, message=str(exc))
            except NotFound as exc:
                return render("error.html", session, status=404, message=str(exc))
            except ReconError as exc:
                return render("error.html", session, status=503, message=str(exc))

        return endpoint

    async def login_page(request: Request) -> Response:
        return render("login.html", None)

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    async def home(request: Request) -> Response:
        return RedirectResponse("/queue", 303)

    async def queue_page(request: Request, session: Session) -> Response:
        query = dict(request.query_params)
        filters = QueueFilters.from_query(query)
        limit = int(query["limit"]) if query.get("limit", "").isdigit() else 50
        result = await run_in_threadpool(bench.queue, filters, limit, query.get("cursor") or None)
        heads = await run_in_threadpool(bench.groups)
        grouped: dict[str, list[dict[str, Any]]] = {}
        for item in result.items:
            grouped.setdefault(item["check_name"], []).append(item)
        kept = {k: v for k, v in query.items() if k != "cursor" and v}
        next_query = "&".join(f"{quote(k)}={quote(v)}" for k, v in kept.items())
        return render(
            "queue.html",
            session,
            filters=asdict(filters),
            query=query,
            grouped=grouped,
            heads=heads,
            next=result.next,
            next_query=next_query,
            bulk_filters=orjson.dumps({k: v for k, v in kept.items() if k != "limit"}).decode(),
            shown=len(result.items),
        )

    async def finding_page(request: Request, session: Session) -> Response:
        key = request.path_params["key"]
        found = await run_in_threadpool(bench.finding, key)
        lines = await run_in_threadpool(bench.trail_lines, key)
        return render("finding.html", session, f=found, lines=lines)

    async def proposals_page(request: Request, session: Session) -> Response:
        pending = await run_in_threadpool(bench.proposals, "pending")
        decided = [
            p for p in await run_in_threadpool(bench.proposals, None) if p["state"] != "pending"
        ][:50]
        return render("proposals.html", session, pending=pending, decided=decided)

    async def close_page(request: Request, session: Session) -> Response:
        from datetime import UTC, datetime

        month = request.query_params.get("period") or f"{datetime.now(UTC):%Y-%m}"
        view = await run_in_threadpool(bench.close_view, month)
        return render("close.html", session, v=view)

    async def not_found(request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/"):
            return _error(404, "no such endpoint")
        return HTMLResponse("not found", 404)

    async def server_error(request: Request, exc: Exception) -> Response:
        log.error("workbench: %s on %s", type(exc).__name__, request.url.path)
        return _error(500, "internal error (logged on the server)")

    routes = [
        Route("/", home),
        Route("/favicon.ico", favicon),
        Route("/login", login_page),
        Route("/queue", page(queue_page)),
        Route("/findings/{key:path}", page(finding_page)),
        Route("/proposals", page(proposals_page)),
        Route("/close", page(close_page)),
        Route("/api/v1/session", session_route, methods=["GET", "POST", "DELETE"]),
        Route("/api/v1/findings", api(findings)),
        Route("/api/v1/groups", api(groups)),
        Route("/api/v1/bulk", api(bulk, write=True), methods=["POST"]),
        Route("/api/v1/batches/{batch}/undo", api(undo, write=True), methods=["POST"]),
        Route(
            "/api/v1/findings/{key:path}/{verb:str}",
            api(act, write=True),
            methods=["POST"],
        ),
        Route("/api/v1/findings/{key:path}", api(finding)),
        Route("/api/v1/matches", api(matches, write=True), methods=["POST"]),
        Route("/api/v1/proposals", api(proposals)),
        Route(
            "/api/v1/proposals/{pid}/{verb}",
            api(decide, write=True),
            methods=["POST"],
        ),
        Route("/api/v1/trail", api(trail)),
        Route("/api/v1/close/{period}", api(close_figures)),
        Route("/api/v1/close/{period}/sign-off", api(sign_off, write=True), methods=["POST"]),
        Route("/api/v1/close/{period}/pack", api(pack)),
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
