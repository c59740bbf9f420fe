"""The error envelope, JSON answers and request ids.

Every error is ``{"error": code, "message": text, "requestId": id}`` with the same id in
the ``X-Request-Id`` header; every answer carries an id, unique per attempt. A handler
refuses a request by raising recon's own :class:`recon.errors.ApiError` (built by
:func:`refusal`); the endpoint turns it into the envelope.
"""

from __future__ import annotations

import secrets
from itertools import count
from typing import Any

import orjson
from starlette.responses import Response

from recon.errors import ApiError

__all__ = ["JSON", "RequestIds", "envelope", "error_envelope", "json_response", "refusal"]

JSON = "application/json"


class RequestIds:
    """Request ids ``req_<6 hex of this process><8 hex counter>``: unique per attempt."""

    def __init__(self) -> None:
        self._counter = count(1)
        self._prefix = secrets.token_hex(3)

    def next(self) -> str:
        return f"req_{self._prefix}{next(self._counter):08x}"


def refusal(status: int, code: str, message: str) -> ApiError:
    """The error a handler raises to answer ``status`` with this code and message.

    The request id is the endpoint's (set when the envelope is written); method and url are
    the client's business, so they stay empty here.
    """
    return ApiError(
        status=status,
        code=code,
        message=message,
        request_id=None,
        method="",
        url="",
        retryable=False,
    )


def envelope(status: int, code: str, message: str, rid: str, **headers: str) -> Response:
    """The error envelope with its request id in the body and the ``X-Request-Id`` header."""
    body = orjson.dumps({"error": code, "message": message, "requestId": rid})
    return Response(body, status, headers={"X-Request-Id": rid, **headers}, media_type=JSON)


def error_envelope(err: ApiError, rid: str) -> Response:
    """The envelope of a refusal raised by a handler."""
    return envelope(err.status or 500, err.code or "error", err.message, rid)


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(obj), status, media_type=JSON)
