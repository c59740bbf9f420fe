"""How many requests may be in flight at once: found while paging, not configured (issue 10).

`AdaptiveLimit` is a gate every attempt passes (all resources of a client share it). With
a fixed limit it is a plain semaphore. Adaptive (`RECON_CONCURRENCY=auto`), it moves the
limit in the manner of TCP congestion control, with the latency signal of Netflix's
`concurrency-limits` (Vegas / Gradient limiters):

- it starts low (2) and, once per *round* (as many answers as the limit), adds one while
  the round's mean latency stays within `tolerance` times the no-queue latency (the
  lowest seen; re-learnt whenever the limit is down to 2, where nothing queues on our
  side) and the limit was actually used (additive increase);
- a round whose latency rose above that (requests queueing at the server, or on the
  client's own cores) takes one off;
- a 429 halves it (multiplicative decrease), at most once a round (a burst of 429s from
  one round is one signal). A round with 429s *and* answers means we are past what the
  provider takes: the limit it came at becomes a *ceiling*; the limit climbs back to one
  below it and stays there, probing the ceiling again only after `probe_rounds` calm
  rounds, doubled after each probe that met another 429 — the limit settles instead of
  oscillating into 429s. A round of nothing but 429s (a storm: the provider pausing
  everybody) sets no ceiling. The `Retry-After` itself is honoured by
  `SharedRateLimiter` (everybody pauses).

Every change is appended to `trajectory` (the limit after it), which tests assert on.
"""

from __future__ import annotations

import math
import threading

__all__ = ["AdaptiveLimit"]

#: The weight of each new answer in the moving average of latency (`AdaptiveLimit.latency`).
_SMOOTH = 0.2


class AdaptiveLimit:
    """A gate on requests in flight with a fixed or an adaptive limit (thread-safe)."""

    def __init__(
        self,
        *,
        fixed: int | None = None,
        initial: int = 2,
        cap: int = 16,
        tolerance: float = 2.0,
        probe_rounds: int = 50,
    ) -> None:
        self.cap = max(1, cap)
        self.adaptive = fixed is None
        self.limit = min(self.cap, max(1, fixed if fixed is not None else initial))
        self.tolerance = tolerance
        self.in_flight = 0
        self.drops = 0  # 429s seen
        self.trajectory: list[int] = [self.limit]
        self._cond = threading.Condition()
        self._base = math.inf  # the no-queue latency
        self._round = 0  # answers this round
        self._round_sum = 0.0
        self._round_min = math.inf
        self._round_ok = 0
        self._round_peak = 0  # the most in flight this round
        self._round_drops = 0
        self._round_dropped = False
        self._cut_from = 0
        self._ceiling: int | None = None  # the limit 429s came at
        self._calm = 0  # answers without a 429 since the last one
        self._probe_rounds = probe_rounds
        # The recent latency of answered requests (a moving average), fixed limit or not:
        # the pages a paced provider needs in flight are its rate times this
        # (`recon.api.scanning`). None until the first answer.
        self.latency: float | None = None

    def __repr__(self) -> str:
        kind = "adaptive" if self.adaptive else "fixed"
        return f"AdaptiveLimit({kind}, limit={self.limit}, in_flight={self.in_flight})"

    def acquire(self) -> None:
        """Block until one more request may be in flight, and count it."""
        with self._cond:
            while self.in_flight >= self.limit:
                self._cond.wait()
            self.in_flight += 1
            self._round_peak = max(self._round_peak, self.in_flight)

    def release(self, latency_s: float | None, *, dropped: bool = False) -> None:
        """One request is answered (`latency_s`: None when it did not get an answer;
        `dropped`: the server shed it with a 429). Moves the limit if adaptive."""
        with self._cond:
            self.in_flight -= 1
            if latency_s is not None and not dropped:
                last = self.latency
                self.latency = latency_s if last is None else last + (latency_s - last) * _SMOOTH
            if self.adaptive:
                self._learn(latency_s, dropped)
            self._cond.notify_all()

    def cancel(self) -> None:
        """A place taken by `acquire` is given back unused (nothing was sent)."""
        with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    # ------------------------------------------------------------------ the rules

    def _learn(self, latency_s: float | None, dropped: bool) -> None:
        self._round += 1
        if dropped:
            self.drops += 1
            self._calm = 0
            self._round_drops += 1
            if not self._round_dropped:  # one cut per round, however many 429s it brings
                self._round_dropped = True
                self._cut_from = self.limit
                self._set(max(1, self.limit // 2))
        else:
            self._calm += 1
            if latency_s is not None:
                self._round_sum += latency_s
                self._round_ok += 1
                self._round_min = min(self._round_min, latency_s)
                self._base = min(self._base, latency_s)
        if self._round >= self.limit:
            self._end_round()

    def _end_round(self) -> None:
        if self._round_dropped:
            if self._round_ok:  # some taken, some shed: we are past what the provider takes
                if self._ceiling is not None and self._cut_from >= self._ceiling:
                    self._probe_rounds *= 2  # the probe failed: wait longer before the next
                self._ceiling = self._cut_from
            # every answer a 429: the provider paused us (Retry-After), not our concurrency
        elif self._round_ok:
            if self.limit <= 2:
                # with at most two in flight nothing queues on our side: this is the no-queue
                # latency now (it may have risen since: a min over all time would only fall)
                self._base = self._round_min
            mean = self._round_sum / self._round_ok
            if mean > self._base * self.tolerance:
                self._set(max(1, self.limit - 1))  # latency rising: requests queue somewhere
            elif self._round_peak >= self.limit and self._may_grow():
                self._set(min(self.cap, self.limit + 1))
        self._round = self._round_ok = self._round_peak = self._round_drops = 0
        self._round_sum = 0.0
        self._round_min = math.inf
        self._round_dropped = False

    def _may_grow(self) -> bool:
        if self._ceiling is None or self.limit + 1 < self._ceiling:
            return True
        if self._calm >= self._probe_rounds * self.limit:  # a long calm: try it again
            self._ceiling = None
            return True
        return False

    def _set(self, limit: int) -> None:
        if limit != self.limit:
            self.limit = limit
            self.trajectory.append(limit)
