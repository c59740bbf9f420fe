"""Who may call an operation: ``x-api-key`` for all but ops 3 and 6, a bearer token for those.

Authentication is checked before anything else, so a wrong key never meets a fault.
"""

from __future__ import annotations

import hmac
from typing import Literal

from starlette.requests import Request

from recon.sandbox.config import SandboxConfig

__all__ = ["Scheme", "check_auth"]

#: "K" = header x-api-key, "B" = Authorization: Bearer
Scheme = Literal["K", "B"]


def check_auth(request: Request, scheme: Scheme, cfg: SandboxConfig) -> str | None:
    """None when the request carries the operation's credential; else why it is refused."""
    key = request.headers.get("x-api-key")
    authz = request.headers.get("authorization")
    if scheme == "K":
        if key is None:
            if authz is not None:
                return "this operation takes the x-api-key header, not Authorization"
            return "missing x-api-key header"
        if not hmac.compare_digest(key.encode(), cfg.api_key.encode()):
            return "invalid API key"
        return None
    if key is not None:
        # the server-side key must never travel with a browser-facing operation
        return "this operation takes Authorization: Bearer; the x-api-key must not be sent"
    if authz is None:
        return "missing Authorization: Bearer header"
    scheme_name, _, token = authz.partition(" ")
    if scheme_name.lower() != "bearer" or not token:
        return "Authorization must be 'Bearer <token>'"
    if not hmac.compare_digest(token.strip().encode(), cfg.bearer_token.encode()):
        return "invalid bearer token"
    return None
