"""One rate limiter per client, shared by every thread that uses it.

When the server pushes back (a 429, or any `Retry-After`), the client pauses *every*
request it sends until the pause is over, not only the request that was told to wait:
firing the other threads' requests into a server that is shedding load only earns more 429s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["SharedRateLimiter"]


class SharedRateLimiter:
    """A thread-safe gate: `pause(s)` holds back every `wait()` for `s` seconds."""

    def __init__(
        self,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        min_interval_s: float = 0.0,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._resume_at = 0.0
        self._min_interval_s = min_interval_s
        self._next_slot = 0.0
        self.pauses = 0  # how many times the server made everybody wait

    @property
    def rate(self) -> float | None:
        """The requests a second it paces to (`RECON_RATE_LIMIT`); None when it does not."""
        return 1.0 / self._min_interval_s if self._min_interval_s > 0 else None

    def pause(self, seconds: float) -> None:
        """Hold back every request of the client for `seconds` from now (never shortens)."""
        with self._lock:
            until = self._clock() + max(0.0, seconds)
            if until > self._resume_at:
                self._resume_at = until
            self.pauses += 1

    def paused_for(self) -> float:
        """Seconds left before requests may go again (0 when not paused)."""
        with self._lock:
            return max(0.0, self._resume_at - self._clock())

    def wait(self) -> float:
        """Block until a request may be sent; returns the seconds waited.

        With a minimum interval (`RECON_RATE_LIMIT`) each caller reserves the next slot on
        a fixed schedule (slot n+1 = slot n + interval, or now if later): sleeping past a
        slot does not push the ones after it, so the pace holds at the rate asked for.
        """
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                delay = self._resume_at - now
                if delay <= 0:
                    if self._min_interval_s <= 0:
                        return waited
                    slot = max(now, self._next_slot)
                    self._next_slot = slot + self._min_interval_s
                    delay = slot - now
                    if delay <= 0:
                        return waited
                    reserved = True
                else:
                    reserved = False
            self._sleep(delay)
            waited += delay
            if reserved:
                return waited
