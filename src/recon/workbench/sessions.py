"""Logins of the workbench: sessions held in memory (a restart logs everybody out), each
with its CSRF token, and the rate limit of failed logins per user name and per client."""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass

__all__ = ["LoginLimiter", "Session", "Sessions"]


@dataclass(frozen=True)
class Session:
    """One login: who, their role when they logged in, the CSRF token, when it ends."""

    token: str
    user: str
    role: str
    csrf: str
    expires: float


class Sessions:
    """The live sessions, by the token in their cookie."""

    def __init__(self, hours: float) -> None:
        self.seconds = hours * 3600
        self._by_token: dict[str, Session] = {}
        self._lock = threading.Lock()

    def start(self, user: str, role: str) -> Session:
        session = Session(
            secrets.token_urlsafe(32),
            user,
            role,
            secrets.token_urlsafe(32),
            time.monotonic() + self.seconds,
        )
        with self._lock:
            self._by_token[session.token] = session
        return session

    def get(self, token: str | None) -> Session | None:
        if not token:
            return None
        with self._lock:
            session = self._by_token.get(token)
            if session is not None and session.expires < time.monotonic():
                del self._by_token[token]
                return None
        return session

    def end(self, token: str) -> None:
        with self._lock:
            self._by_token.pop(token, None)


class LoginLimiter:
    """At most `attempts` failed logins per key in `window` seconds (a key: `user:NAME`, or
    `ip:ADDRESS`, which gets `per_client` times as many); beyond that, logins are refused
    until the window has passed."""

    def __init__(self, attempts: int = 5, window: float = 900.0, per_client: int = 6) -> None:
        self.attempts = attempts
        self.window = window
        self.per_client = per_client
        self._failures: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> list[float]:
        kept = [t for t in self._failures.get(key, []) if now - t < self.window]
        self._failures[key] = kept
        return kept

    def wait(self, *keys: str) -> int:
        """Seconds until a login may be tried again for these keys (0: now)."""
        now = time.monotonic()
        with self._lock:
            waits = [
                int(self.window - (now - recent[0])) + 1
                for key, recent in ((k, self._recent(k, now)) for k in keys)
                if len(recent) >= self.attempts * (self.per_client if key.startswith("ip:") else 1)
            ]
        return max(waits, default=0)

    def failed(self, *keys: str) -> None:
        now = time.monotonic()
        with self._lock:
            for key in keys:
                self._recent(key, now).append(now)

    def succeeded(self, *keys: str) -> None:
        with self._lock:
            for key in keys:
                self._failures.pop(key, None)
