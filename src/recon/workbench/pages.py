"""The workbench's pages (jinja2, autoescaped; recon.workbench.web wraps each in the session
check): the login, the queue (filters, saved views, grouped by check or by root cause), a
finding, the approvers' inbox and the close. Their forms send JSON to the API
(static/workbench.js) with the session's CSRF token."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from recon.workbench.queue import ROOT_CAUSES, QueueFilters
from recon.workbench.sessions import Session
from recon.workbench.web import Web

__all__ = ["CAUSE_LABELS", "page_routes"]

#: The root causes in words (sql/workbench/root_cause.sql says which checks give which).
CAUSE_LABELS = {
    "counterpart_missing": "Counterpart missing",
    "amount_differs": "Amount differs",
    "currency_differs": "Currency differs",
    "status_differs": "Status differs",
    "needs_a_match": "Needs a match",
    "duplicate": "Duplicate",
    "in_flight": "In flight",
    "bad_data": "Bad data",
    "other": "Other",
}
GROUPINGS = ("check", "cause")


def _link(query: dict[str, str], **changes: str | None) -> str:
    """/queue with `query` changed (a None value: left out), never a cursor."""
    merged = {k: v for k, v in {**query, **changes}.items() if v and k != "cursor"}
    return "/queue" + (f"?{urlencode(merged)}" if merged else "")


def page_routes(web: Web) -> list[BaseRoute]:
    """The pages' routes on `web`."""
    bench = web.bench

    async def login_page(request: Request) -> Response:
        return web.render("login.html", None)

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    async def home(request: Request) -> Response:
        return RedirectResponse("/queue", 303)

    async def queue_page(request: Request, session: Session) -> Response:
        query = dict(request.query_params)
        filters = QueueFilters.from_query(query)
        grouping = query.get("group") if query.get("group") in GROUPINGS else "check"
        limit = int(query["limit"]) if query.get("limit", "").isdigit() else 50
        result = await run_in_threadpool(bench.queue, filters, limit, query.get("cursor") or None)
        heads = await run_in_threadpool(bench.groups)
        saved = await run_in_threadpool(web.views.list, session.user)
        grouped: dict[str, list[dict[str, Any]]] = {}
        for item in result.items:
            head = item["check_name"] if grouping == "check" else item["root_cause"]
            grouped.setdefault(head, []).append(item)
        kept = {k: v for k, v in query.items() if k != "cursor" and v}
        current = filters.to_query()
        return web.render(
            "queue.html",
            session,
            filters=asdict(filters),
            query=query,
            grouping=grouping,
            grouped=grouped,
            heads=heads["groups"],
            causes=heads["root_causes"],
            labels=CAUSE_LABELS,
            cause_names=ROOT_CAUSES,
            link=lambda **changes: _link(kept, **changes),
            views=[{**v, "href": _link(v["filters"])} for v in saved],
            view_filters=orjson.dumps(current).decode(),
            next=result.next,
            next_query=urlencode(kept),
            bulk_filters=orjson.dumps(current).decode(),
            shown=len(result.items),
        )

    async def finding_page(request: Request, session: Session) -> Response:
        key = request.path_params["key"]
        found = await run_in_threadpool(bench.finding, key)
        lines = await run_in_threadpool(bench.trail_lines, key)
        return web.render("finding.html", session, f=found, lines=lines, labels=CAUSE_LABELS)

    async def proposals_page(request: Request, session: Session) -> Response:
        everything = await run_in_threadpool(bench.proposals, None)
        pending = [p for p in everything if p["state"] == "pending"]
        decided = [p for p in everything if p["state"] != "pending"][:50]
        return web.render("proposals.html", session, pending=pending, decided=decided)

    async def close_page(request: Request, session: Session) -> Response:
        month = request.query_params.get("period") or f"{datetime.now(UTC):%Y-%m}"
        view = await run_in_threadpool(bench.close_view, month)
        return web.render("close.html", session, v=view)

    page = web.page
    return [
        Route("/", home),
        Route("/favicon.ico", favicon),
        Route("/login", login_page),
        Route("/queue", page(queue_page)),
        Route("/findings/{key:path}", page(finding_page)),
        Route("/proposals", page(proposals_page)),
        Route("/close", page(close_page)),
    ]
