"""Reading a request: list parameters (``max-records``, ``skip``) and JSON body fields.

Anything malformed is refused with 400 ``invalid_request`` and a message naming the field.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from starlette.requests import Request

from recon.sandbox.envelope import refusal

__all__ = [
    "DEFAULT_PAGE",
    "MAX_PAGE",
    "json_body",
    "list_params",
    "number",
    "str_field",
    "str_list",
]

MAX_PAGE = 200
DEFAULT_PAGE = 50
_INT_RE = re.compile(r"[0-9]{1,18}")


def list_params(request: Request) -> tuple[int, int]:
    """(max-records, skip) of a list request."""
    q = request.query_params
    raw_limit = q.get("max-records")
    raw_skip = q.get("skip")
    limit = DEFAULT_PAGE
    skip = 0
    if raw_limit is not None:
        if not _INT_RE.fullmatch(raw_limit) or not 1 <= int(raw_limit) <= MAX_PAGE:
            raise refusal(400, "invalid_request", "max-records must be an integer from 1 to 200")
        limit = int(raw_limit)
    if raw_skip is not None:
        if not _INT_RE.fullmatch(raw_skip):
            raise refusal(400, "invalid_request", "skip must be an integer of 0 or more")
        skip = int(raw_skip)
    return limit, skip


async def json_body(request: Request) -> dict[str, Any]:
    """The body as a JSON object, whatever the Content-Type."""
    raw = await request.body()
    if not raw.strip():
        raise refusal(400, "invalid_request", "a JSON object body is required")
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise refusal(400, "invalid_request", "the body is not valid JSON") from None
    if not isinstance(obj, dict):
        raise refusal(400, "invalid_request", "the body must be a JSON object")
    return obj


def str_field(body: dict[str, Any], key: str, *, required: bool) -> str | None:
    if key not in body:
        if required:
            raise refusal(400, "invalid_request", f"{key} is required")
        return None
    v = body[key]
    if not isinstance(v, str):
        raise refusal(400, "invalid_request", f"{key} must be a string")
    return v


def str_list(body: dict[str, Any], key: str, *, required: bool) -> list[str] | None:
    if key not in body:
        if required:
            raise refusal(400, "invalid_request", f"{key} is required")
        return None
    v = body[key]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise refusal(400, "invalid_request", f"{key} must be an array of strings")
    return list(v)


def number(body: dict[str, Any], key: str, *, required: bool, lo: float, hi: float) -> Any:
    if key not in body:
        if required:
            raise refusal(400, "invalid_request", f"{key} is required")
        return None
    v = body[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi:
        raise refusal(400, "invalid_request", f"{key} must be a number from {lo:g} to {hi:g}")
    return v
