"""Creates and their idempotency keys.

Keys are scoped per operation. The same key with the same body (compared as parsed JSON)
returns the stored answer, the same key with another body is a 409
``idempotency_conflict``, no key makes a new object each time. Only successful creates are
stored (a refusal does not burn the key).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from recon.sandbox.envelope import JSON, refusal

__all__ = ["Creates", "Stored"]

#: A create: makes the object (or raises a refusal) and returns (status, object).
Make = Callable[[], tuple[int, dict[str, Any]]]


@dataclass
class Stored:
    """The answer stored under one idempotency key."""

    fingerprint: bytes
    status: int
    body: bytes
    hits: int = 1


class Creates:
    """The creates made through the API: counts per operation, answers per idempotency key."""

    def __init__(self, header: str, lock: threading.RLock) -> None:
        self.header = header
        self._lock = lock
        self.stored: dict[tuple[str, str], Stored] = {}
        self.counts: dict[str, int] = {}

    def answer(self, request: Request, op: str, body: dict[str, Any], make: Make) -> Response:
        """Make the object once per idempotency key (or each time without one)."""
        key = request.headers.get(self.header)
        if key is not None and not 1 <= len(key) <= 255:
            raise refusal(400, "invalid_request", "the idempotency key must be 1 to 255 characters")
        fingerprint = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
        with self._lock:
            if key is not None:
                stored = self.stored.get((op, key))
                if stored is not None:
                    if stored.fingerprint != fingerprint:
                        raise refusal(
                            409,
                            "idempotency_conflict",
                            "this idempotency key was used with a different request body",
                        )
                    stored.hits += 1
                    return Response(stored.body, stored.status, media_type=JSON)
            status, obj = make()
            raw = orjson.dumps(obj)
            self.counts[op] = self.counts.get(op, 0) + 1
            if key is not None:
                self.stored[(op, key)] = Stored(fingerprint, status, raw)
        return Response(raw, status, media_type=JSON)

    def keys_json(self) -> dict[str, dict[str, int]]:
        """``{"<op>:<key>": {"status", "hits"}}`` for /_sandbox/state."""
        return {
            f"{op}:{key}": {"status": s.status, "hits": s.hits}
            for (op, key), s in self.stored.items()
        }
