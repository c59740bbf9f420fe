"""How fast and how much the sandbox serves, as a real API would: latency, rate, concurrency.

- :class:`Latency`: every API answer takes ``latency_ms`` plus a jitter of 0..``jitter_ms``
  drawn from the seed and the request (the same requests meet the same delays).
- :class:`TokenBucket`: ``rate`` requests a second with bursts of ``burst``; past it a 429
  with ``Retry-After`` in whole seconds (at least 1).
- :class:`InFlight`: at most ``limit`` requests at once; one more is answered 503.

The waits are awaited through an injected ``sleep`` (``asyncio.sleep`` by default), so they
never block the event loop (concurrent requests overlap as against a real API) and a test
can see what was asked for without timing anything.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recon.sandbox.config import SandboxConfig

__all__ = ["PACING_FIELDS", "InFlight", "Latency", "Pacing", "TokenBucket"]

#: The settings of the pacing (SandboxConfig fields, and keywords of SandboxState.set_faults).
PACING_FIELDS = ("latency_ms", "latency_jitter_ms", "rate", "burst", "max_in_flight")


def _hash(*parts: object) -> int:
    raw = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "big")


class Latency:
    """The time an answer takes: ``ms`` plus a deterministic jitter of 0..``jitter_ms``."""

    def __init__(self, seed: int, ms: float = 0, jitter_ms: float = 0) -> None:
        if ms < 0 or jitter_ms < 0:
            raise ValueError("latency and jitter must be >= 0 ms")
        self.seed = seed
        self.ms = ms
        self.jitter_ms = jitter_ms

    def seconds(self, method: str, path: str, query: str, attempt: int) -> float:
        """The delay of this attempt of this request, in seconds."""
        jitter = 0.0
        if self.jitter_ms > 0:
            steps = int(self.jitter_ms * 1000)  # microsecond resolution
            h = _hash(self.seed, "latency", method, path, query, attempt)
            jitter = (h % (steps + 1)) / 1000
        return (self.ms + jitter) / 1000


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` kept; a request takes one (thread-safe)."""

    def __init__(self, rate: float, burst: int | None, clock: Callable[[], float]) -> None:
        if rate <= 0:
            raise ValueError("rate must be > 0 requests a second")
        self.rate = rate
        self.burst = burst if burst is not None else max(1, math.ceil(rate))
        if self.burst < 1:
            raise ValueError("burst must be >= 1")
        self._clock = clock
        self._tokens = float(self.burst)
        self._last = clock()
        self._lock = threading.Lock()

    def take(self) -> int | None:
        """None when the request may go; else the ``Retry-After`` seconds (whole, >= 1)."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
            self._last = now
            if self._tokens >= 1:
                self._tokens -= 1
                return None
            wait = (1 - self._tokens) / self.rate
        return max(1, math.ceil(wait))


class InFlight:
    """Counts the requests being answered; refuses one beyond ``limit`` (thread-safe)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("max in flight must be >= 1")
        self.limit = limit
        self.now = 0
        self.peak = 0
        self._lock = threading.Lock()

    def enter(self) -> bool:
        """Count one more request in flight; False (and nothing counted) beyond the limit."""
        with self._lock:
            if self.now >= self.limit:
                return False
            self.now += 1
            self.peak = max(self.peak, self.now)
            return True

    def leave(self) -> None:
        with self._lock:
            self.now -= 1


class Pacing:
    """The latency, rate limit and concurrency limit of one sandbox, and what they refused."""

    def __init__(
        self,
        *,
        seed: int,
        sleep: Callable[[float], Awaitable[None]],
        clock: Callable[[], float],
        latency_ms: float = 0,
        latency_jitter_ms: float = 0,
        rate: float | None = None,
        burst: int | None = None,
        max_in_flight: int | None = None,
    ) -> None:
        self.sleep = sleep
        self._seed = seed
        self._clock = clock
        self.latency = Latency(seed, latency_ms, latency_jitter_ms)
        self.bucket = TokenBucket(rate, burst, clock) if rate is not None else None
        self.in_flight = InFlight(max_in_flight) if max_in_flight is not None else None
        self.rate_limited = 0
        self.overloaded = 0

    @classmethod
    def from_config(cls, cfg: SandboxConfig) -> Pacing:
        return cls(
            seed=cfg.seed,
            sleep=cfg.sleep,
            clock=cfg.clock,
            **{name: getattr(cfg, name) for name in PACING_FIELDS},
        )

    def settings(self) -> dict[str, Any]:
        return {
            "latency_ms": self.latency.ms,
            "latency_jitter_ms": self.latency.jitter_ms,
            "rate": self.bucket.rate if self.bucket else None,
            "burst": self.bucket.burst if self.bucket else None,
            "max_in_flight": self.in_flight.limit if self.in_flight else None,
        }

    def changed(self, **changes: Any) -> Pacing:
        """New pacing with ``changes`` (PACING_FIELDS); the refusal counts carry over."""
        unknown = set(changes) - set(PACING_FIELDS)
        if unknown:
            raise ValueError(f"unknown pacing setting {', '.join(sorted(unknown))}")
        settings = self.settings()
        if "rate" in changes and "burst" not in changes:
            settings["burst"] = None  # the burst follows the new rate unless given
        new = Pacing(seed=self._seed, sleep=self.sleep, clock=self._clock, **(settings | changes))
        new.rate_limited = self.rate_limited
        new.overloaded = self.overloaded
        return new

    def admit(self) -> int | None:
        """None when a request may go on; else the Retry-After of its 429."""
        if self.bucket is None:
            return None
        wait = self.bucket.take()
        if wait is not None:
            self.rate_limited += 1
        return wait

    def as_json(self) -> dict[str, Any]:
        s = self.settings()
        return {
            "latencyMs": s["latency_ms"],
            "latencyJitterMs": s["latency_jitter_ms"],
            "rate": s["rate"],
            "burst": s["burst"],
            "maxInFlight": s["max_in_flight"],
            "inFlight": self.in_flight.now if self.in_flight else None,
            "inFlightPeak": self.in_flight.peak if self.in_flight else None,
            "rateLimited": self.rate_limited,
            "overloaded": self.overloaded,
        }
