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

The gate also learns the provider's rate when it does not publish one (`rate_seen`): a
token bucket that answers 429 is empty, so the requests it took between two of its 429s
are its rate times the time between them, give or take one (the sandbox at 100 a second:
97.7-101.8 measured). At the first 429 the stretch since the first answer gives an
estimate above the rate (the bucket was full at the start: 118-145 measured), which the
next 429 corrects. Before the first 429 nothing is known (None: the provider may not limit
at all). The pages a paced provider needs in flight are that rate times the latency
(`recon.api.scanning`); a client capped there could never find a higher rate if only 429s
moved the estimate, so a stretch of `_CALM_S` without a 429 raises it to that stretch's
answers a second (too low an estimate, e.g. tokens lost while the bucket sat full during
a long `Retry-After`, grows back until the provider pushes back again).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

__all__ = ["AdaptiveLimit"]

#: The weight of each new answer in the moving average of latency (`AdaptiveLimit.latency`).
_SMOOTH = 0.2
#: Two 429s at least this far apart measure the provider's rate (a burst of 429s from one
#: round is one bucket found empty); further apart than `_RATE_WINDOW_MAX_S`, the stretch
#: between them says little (the lists may have idled, the bucket full) and only restarts
#: the count.
_RATE_WINDOW_S = 1.0
_RATE_WINDOW_MAX_S = 10.0
#: Fewer answers than this between two 429s is a storm (the provider pausing everybody),
#: not the pace it keeps: no estimate.
_RATE_MIN_ANSWERS = 10
#: A stretch this long without a 429 raises the estimate to its answers per second. Long,
#: because a stretch that starts with the bucket refilled (after a `Retry-After`) can take
#: up to its burst more than the rate: over 2 s the sandbox's 100 a second read as 118.
_CALM_S = 5.0


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
        clock: Callable[[], float] = time.monotonic,
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
        # The provider's rate as its 429s show it (requests a second; None until known).
        self.rate_seen: float | None = None
        self._clock = clock
        self._answered = 0  # answers other than 429s, ever
        self._shed_mark: tuple[float, int] | None = None  # (when, answered) at a 429
        self._calm_mark: tuple[float, int] | None = None  # (when, answered) since a 429
        self._first_answer: tuple[float, int] | None = None  # (when, 0) at the first answer

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
            if dropped:
                self._shed()
            elif latency_s is not None:
                self._answer()
            if self.adaptive:
                self._learn(latency_s, dropped)
            self._cond.notify_all()

    def cancel(self) -> None:
        """A place taken by `acquire` is given back unused (nothing was sent)."""
        with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    # ------------------------------------------------------------------ the provider's rate

    def _shed(self) -> None:
        """A 429: the provider's bucket is empty now. The answers since the last 429 (or,
        at the first, since the first answer) over the time between measure its rate."""
        now, answered = self._clock(), self._answered
        self._calm_mark = (now, answered)
        last = self._shed_mark
        if last is not None and now - last[0] < _RATE_WINDOW_S:
            return  # the same bucket found empty again: the mark stays
        since = last or self._first_answer
        if since is not None and now - since[0] <= _RATE_WINDOW_MAX_S:
            taken = answered - since[1]
            if taken >= _RATE_MIN_ANSWERS and now - since[0] >= _RATE_WINDOW_S:
                self.rate_seen = taken / (now - since[0])
        self._shed_mark = (now, answered)

    def _answer(self) -> None:
        """An answer other than a 429: counted, and a calm stretch raises the estimate."""
        now = self._clock()
        if self._first_answer is None:
            self._first_answer = (now, self._answered)
        self._answered += 1
        calm = self._calm_mark
        if calm is None or self.rate_seen is None or now - calm[0] < _CALM_S:
            return
        self.rate_seen = max(self.rate_seen, (self._answered - calm[1]) / (now - calm[0]))
        self._calm_mark = (now, self._answered)

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
