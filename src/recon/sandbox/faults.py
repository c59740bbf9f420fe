"""Fault profiles: which answer a request gets, decided deterministically from the seed.

A fault is a pure function of ``(seed, method, path, query, attempt)``, where ``attempt``
counts how often this exact request was seen before. A retry is a new attempt, so it gets a
fresh decision: retries of a failed page succeed (at the latest on attempt
``max_consecutive + 1``), and the same sequence of requests always meets the same faults.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum
from threading import Lock

__all__ = ["PROFILES", "Fault", "FaultPlan", "FaultProfile"]

#: The profile names ``--faults`` accepts (comma-separated combinations are allowed).
PROFILES = ("none", "flaky", "chaos", "drift", "strict", "capped", "capped-payments")


class Fault(StrEnum):
    """What a request meets instead of (or on top of) its normal answer."""

    RATE_LIMITED = "429"
    SERVER_ERROR = "500"
    BAD_GATEWAY = "502"
    UNAVAILABLE = "503"
    TRUNCATED = "truncated"
    SLOW = "slow"


_FLAKY_FAULTS = (
    Fault.RATE_LIMITED,
    Fault.RATE_LIMITED,
    Fault.SERVER_ERROR,
    Fault.BAD_GATEWAY,
    Fault.UNAVAILABLE,
    Fault.TRUNCATED,
    Fault.SLOW,
)


@dataclass(frozen=True, slots=True)
class FaultProfile:
    """A parsed ``--faults`` value, e.g. ``flaky,capped``."""

    flaky: bool = False
    chaos: bool = False
    drift: bool = False
    strict: bool = False
    capped: bool = False
    capped_payments_only: bool = False

    @classmethod
    def parse(cls, spec: str) -> FaultProfile:
        names = [p.strip().lower() for p in spec.split(",") if p.strip()]
        unknown = [n for n in names if n not in PROFILES]
        if unknown:
            raise ValueError(
                f"unknown fault profile {', '.join(unknown)!s}; choose from {', '.join(PROFILES)}"
            )
        chaos = "chaos" in names
        return cls(
            flaky="flaky" in names or chaos,
            chaos=chaos,
            drift="drift" in names,
            strict="strict" in names,
            capped="capped" in names or "capped-payments" in names,
            capped_payments_only="capped-payments" in names and "capped" not in names,
        )

    @property
    def name(self) -> str:
        parts = [
            n
            for n, on in (
                ("chaos", self.chaos),
                ("flaky", self.flaky and not self.chaos),
                ("drift", self.drift),
                ("strict", self.strict),
                ("capped-payments", self.capped and self.capped_payments_only),
                ("capped", self.capped and not self.capped_payments_only),
            )
            if on
        ]
        return ",".join(parts) or "none"


@dataclass
class FaultPlan:
    """Decides the fault of each attempt (thread-safe; counts attempts per request)."""

    profile: FaultProfile
    seed: int
    rate: float = 0.15
    max_consecutive: int = 2
    _attempts: dict[tuple[str, str, str], int] = field(default_factory=dict)
    _lock: Lock = field(default_factory=Lock)

    def _hash(self, *parts: object) -> int:
        raw = "\x1f".join(str(p) for p in (self.seed, *parts)).encode()
        return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "big")

    def attempt(self, method: str, path: str, query: str) -> int:
        """Count this attempt and return its number (0 for the first)."""
        key = (method, path, query)
        with self._lock:
            n = self._attempts.get(key, 0)
            self._attempts[key] = n + 1
        return n

    def decide(self, method: str, path: str, query: str, attempt: int) -> Fault | None:
        if not self.profile.flaky or attempt >= self.max_consecutive:
            return None
        h = self._hash(method, path, query, attempt)
        if (h % 10_000) >= int(self.rate * 10_000):
            return None
        return _FLAKY_FAULTS[(h >> 20) % len(_FLAKY_FAULTS)]

    def after_commit(self, method: str, path: str, query: str, attempt: int) -> bool:
        """For a create that meets a 5xx: was the object created before the error?"""
        return bool(self._hash("commit", method, path, query, attempt) & 1)

    def poisoned_page(self, payments: int, page_size: int = 200) -> int | None:
        """Under ``chaos``: the ``skip`` of the payments page that fails every time."""
        if not self.profile.chaos:
            return None
        pages = max(1, -(-payments // page_size))
        k = 1 + self._hash("poison") % (pages - 1) if pages > 1 else 0
        return k * page_size

    def drift_pick(self, resource: str, counter: int, modulo: int) -> int:
        return self._hash("drift", resource, counter) % max(modulo, 1)

    def reset(self) -> None:
        with self._lock:
            self._attempts.clear()
