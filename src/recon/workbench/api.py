"""The workbench's JSON API under /api/v1 (docs/workbench.md documents every request): each
handler reads its request and calls the service (recon.workbench.service), which checks the
roles and the four eyes; recon.workbench.web wraps each in the session and CSRF checks."""

from __future__ import annotations

import re
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from recon.workbench.base import Outcome
from recon.workbench.queue import QueueFilters
from recon.workbench.rules import Invalid, NotFound
from recon.workbench.sessions import Session
from recon.workbench.web import COOKIE, Web, error, json

__all__ = ["api_routes"]

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,39}")  # recon.workbench.users' names


def api_routes(web: Web) -> list[BaseRoute]:
    """The API's routes on `web`."""
    bench = web.bench

    # -- session -------------------------------------------------------------------------

    async def login(request: Request) -> Response:
        try:
            data = await web.body(request)
        except Invalid as exc:
            return error(400, str(exc))
        name, password = data.get("user"), data.get("password")
        if not isinstance(name, str) or not isinstance(password, str):
            return error(400, 'send {"user": …, "password": …}')
        client = f"ip:{request.client.host if request.client else '?'}"
        known = name if _NAME.fullmatch(name) else "invalid-name"
        wait = web.limiter.wait(f"user:{known}", client)
        if wait:
            return json(
                {"error": "too many failed logins: try again later"},
                429,
                headers={"Retry-After": str(wait)},
            )
        user = await run_in_threadpool(web.users.authenticate, name, password)
        await run_in_threadpool(
            bench.trail.record,
            "login",
            {"ok": user is not None, "client": client},
            note=None,
            who=known,
        )
        if user is None:
            web.limiter.failed(f"user:{known}", client)
            return error(401, "wrong user name or password")
        web.limiter.succeeded(f"user:{known}")
        session = web.sessions.start(user.name, user.role)
        response = json({"user": user.name, "role": user.role, "csrf": session.csrf})
        response.set_cookie(
            COOKIE,
            session.token,
            max_age=int(web.sessions.seconds),
            httponly=True,
            samesite="strict",
            secure=web.secure_cookie,
            path="/",
        )
        return response

    async def whoami(request: Request, session: Session) -> Response:
        return json({"user": session.user, "role": session.role, "csrf": session.csrf})

    async def logout(request: Request, session: Session) -> Response:
        web.sessions.end(session.token)
        response = json({"ended": True})
        response.delete_cookie(COOKIE, path="/")
        return response

    async def session_route(request: Request) -> Response:
        if request.method == "POST":
            return await login(request)
        if request.method == "DELETE":
            return await web.api(logout, write=True)(request)
        return await web.api(whoami)(request)

    # -- the queue and a finding -----------------------------------------------------------

    async def findings(request: Request, session: Session) -> Response:
        query = dict(request.query_params)
        filters = QueueFilters.from_query(query)
        try:
            limit = int(query.get("limit") or 50)
        except ValueError:
            raise Invalid("limit must be a whole number") from None
        page = await run_in_threadpool(bench.queue, filters, limit, query.get("cursor") or None)
        items = [{k: v for k, v in i.items() if k not in ("detail",)} for i in page.items]
        return json({"items": items, "next": page.next})

    async def finding(request: Request, session: Session) -> Response:
        return json(await run_in_threadpool(bench.finding, request.path_params["key"]))

    async def groups(request: Request, session: Session) -> Response:
        return json(await run_in_threadpool(bench.groups))

    async def act(request: Request, session: Session) -> Response:
        key, verb = request.path_params["key"], request.path_params["verb"]
        data = await web.body(request)
        who = web.actor(session)
        result: Outcome
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
            done = await run_in_threadpool(bench.accept_suggestion, who, key, data.get("note"))
            result = Outcome(applied=done.proposal is None, proposal=done.proposal)
        else:
            raise NotFound(f"no action {verb}")
        return web.outcome(result)

    async def bulk(request: Request, session: Session) -> Response:
        data = await web.body(request)
        raw = data.get("filters") or {}
        if not isinstance(raw, dict):
            raise Invalid("filters must be an object of the queue's filters")
        filters = QueueFilters.from_query({str(k): str(v) for k, v in raw.items()})
        preview = bool(data.get("preview"))
        result = await run_in_threadpool(
            lambda: bench.bulk(web.actor(session), filters, data, preview=preview)
        )
        return json(result)

    async def undo(request: Request, session: Session) -> Response:
        data = await web.body(request)
        count = await run_in_threadpool(
            bench.undo_batch, web.actor(session), request.path_params["batch"], data.get("note")
        )
        return json({"undone": count})

    async def matches(request: Request, session: Session) -> Response:
        data = await web.body(request)
        result = await run_in_threadpool(
            bench.propose_match,
            web.actor(session),
            data.get("order"),
            data.get("payments"),
            data.get("note"),
        )
        return web.outcome(result)

    # -- proposals, the trail ----------------------------------------------------------------

    async def proposals(request: Request, session: Session) -> Response:
        state = request.query_params.get("state", "pending")
        if state not in ("pending", "approved", "rejected", "all"):
            raise Invalid("state must be pending, approved, rejected or all")
        found = await run_in_threadpool(bench.proposals, None if state == "all" else state)
        return json({"items": found})

    async def decide(request: Request, session: Session) -> Response:
        pid, verb = request.path_params["pid"], request.path_params["verb"]
        data = await web.body(request)
        if verb == "approve":
            result = await run_in_threadpool(
                bench.approve, web.actor(session), pid, data.get("note")
            )
        elif verb == "reject":
            result = await run_in_threadpool(
                bench.reject, web.actor(session), pid, data.get("note")
            )
        else:
            raise NotFound(f"no decision {verb}")
        return json({"applied": result.applied, "proposal": result.proposal})

    async def trail(request: Request, session: Session) -> Response:
        key = request.query_params.get("finding_key") or None
        return json({"lines": await run_in_threadpool(bench.trail_lines, key)})

    # -- saved views -------------------------------------------------------------------------

    async def views(request: Request, session: Session) -> Response:
        if request.method == "POST":
            data = await web.body(request)
            raw = data.get("filters") or {}
            if not isinstance(raw, dict):
                raise Invalid("filters must be an object of the queue's filters")
            saved = await run_in_threadpool(web.views.save, session.user, data.get("name"), raw)
            return json({"view": saved})
        return json({"items": await run_in_threadpool(web.views.list, session.user)})

    async def view(request: Request, session: Session) -> Response:
        name = request.path_params["name"]
        await run_in_threadpool(web.views.delete, session.user, name)
        return json({"deleted": name})

    # -- the close ---------------------------------------------------------------------------

    async def close_figures(request: Request, session: Session) -> Response:
        return json(await run_in_threadpool(bench.close_view, request.path_params["period"]))

    async def sign_off(request: Request, session: Session) -> Response:
        data = await web.body(request)
        await run_in_threadpool(
            lambda: bench.sign_off(
                web.actor(session),
                request.path_params["period"],
                data.get("note"),
                web.reports,
                provisional=data.get("provisional") is True,
            )
        )
        return json({"applied": True})

    async def pack(request: Request, session: Session) -> Response:
        period = request.path_params["period"]
        path = await run_in_threadpool(bench.pack, period, web.reports)
        return FileResponse(path, filename=f"close-{path.parent.name.removeprefix('close-')}.xlsx")

    api = web.api
    routes: list[Any] = [
        Route("/api/v1/session", session_route, methods=["GET", "POST", "DELETE"]),
        Route("/api/v1/findings", api(findings)),
        Route("/api/v1/groups", api(groups)),
        Route("/api/v1/bulk", api(bulk, write=True), methods=["POST"]),
        Route("/api/v1/batches/{batch}/undo", api(undo, write=True), methods=["POST"]),
        Route("/api/v1/findings/{key:path}/{verb:str}", api(act, write=True), methods=["POST"]),
        Route("/api/v1/findings/{key:path}", api(finding)),
        Route("/api/v1/matches", api(matches, write=True), methods=["POST"]),
        Route("/api/v1/proposals", api(proposals)),
        Route("/api/v1/proposals/{pid}/{verb}", api(decide, write=True), methods=["POST"]),
        Route("/api/v1/trail", api(trail)),
        Route("/api/v1/views", api(views), methods=["GET", "POST"]),
        Route("/api/v1/views/{name:path}", api(view, write=True), methods=["DELETE"]),
        Route("/api/v1/close/{period}", api(close_figures)),
        Route("/api/v1/close/{period}/sign-off", api(sign_off, write=True), methods=["POST"]),
        Route("/api/v1/close/{period}/pack", api(pack)),
    ]
    return routes
