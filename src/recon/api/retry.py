"""The retry policy, sans-IO: what to do after an attempt, decided without doing any I/O.

The sync client (and any async variant) feeds each attempt's outcome to `RetryPolicy.decide`
and gets back whether to retry and how long to wait. The policy (docs/design.md, "The
API's open points"):

| outcome | retried |
|---|---|
| connect/read/write error, timeout, truncated body | yes |
| 2xx whose body is not JSON, or not the expected list shape | yes |
| 408, 409, 425, 429, 500, 502, 503, 504 | yes |
| TLS failure (certificate, handshake) | never |
| 401, 403 | never; the run stops (`AuthError`) |
| any other status >= 400 | never |

Waits are exponential with full jitter (`uniform(0, min(max, initial * 2**n))`); a
`Retry-After` (seconds or HTTP date) replaces the jittered wait and is never shortened; one
longer than the cap fails the call. Attempts and the call's total time are bounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import Enum

__all__ = [
    "RETRYABLE_STATUSES",
    "Decision",
    "Outcome",
    "RetryPolicy",
    "Verdict",
    "is_retryable_status",
    "parse_retry_after",
]

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def is_retryable_status(status: int) -> bool:
    """True if an answer with HTTP `status` is worth another attempt."""
    return status in RETRYABLE_STATUSES


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds asked for by a `Retry-After` value (delta-seconds or HTTP date); None if unusable.

    A date in the past asks for 0 s. Garbage (and negative or non-finite numbers) is None:
    the caller then falls back to its own backoff.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


class Outcome(Enum):
    """What one attempt came to, as the policy sees it."""

    OK = "ok"
    STATUS = "status"  # an HTTP error status
    BAD_BODY = "bad_body"  # 2xx that is not JSON or not the expected shape
    TRANSPORT = "transport"  # connect/read/write error, timeout, truncated body
    TLS = "tls"  # certificate or handshake failure
    FATAL = "fatal"  # not worth another attempt whatever the policy (e.g. a malformed request)


class Verdict(Enum):
    """The policy's answer."""

    DONE = "done"  # success: return it
    RETRY = "retry"  # wait `Decision.wait_s`, then try again
    FAIL = "fail"  # give up: raise the attempt's error
    WAIT_TOO_LONG = "wait_too_long"  # the server asked for a wait above the cap: fail saying so


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict on one attempt, the wait before the next one and why."""

    verdict: Verdict
    wait_s: float = 0.0
    reason: str = ""
    # True when the server asked for the wait (429 / Retry-After): every request pauses.
    shared: bool = False
    requested_s: float | None = None


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded attempts, a per-call budget, full-jitter backoff, Retry-After capped."""

    max_attempts: int = 5
    call_budget_s: float = 300.0
    retry_after_cap_s: float = 120.0
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 30.0

    def backoff_s(self, attempt: int, rand: float) -> float:
        """Full-jitter wait after failed `attempt` (1-based); `rand` is uniform in [0, 1)."""
        ceiling = min(self.backoff_max_s, self.backoff_initial_s * 2.0 ** (attempt - 1))
        return float(ceiling * rand)

    def decide(
        self,
        outcome: Outcome,
        *,
        attempt: int,
        elapsed_s: float,
        status: int | None = None,
        retry_after_s: float | None = None,
        rand: float = 1.0,
    ) -> Decision:
        """What to do after `attempt` (1-based) ended in `outcome`, `elapsed_s` into the call."""
        if outcome is Outcome.OK:
            return Decision(Verdict.DONE)
        if outcome is Outcome.TLS:
            return Decision(Verdict.FAIL, reason="TLS failures are never retried")
        if outcome is Outcome.FATAL:
            return Decision(Verdict.FAIL, reason="not retryable")
        if outcome is Outcome.STATUS and (status is None or not is_retryable_status(status)):
            return Decision(Verdict.FAIL, reason=f"status {status} is not retryable")
        if attempt >= self.max_attempts:
            return Decision(Verdict.FAIL, reason=f"gave up after {attempt} attempts")
        shared = status == 429
        if retry_after_s is not None and outcome is Outcome.STATUS:
            if retry_after_s > self.retry_after_cap_s:
                return Decision(
                    Verdict.WAIT_TOO_LONG,
                    wait_s=retry_after_s,
                    reason="Retry-After above the cap",
                    requested_s=retry_after_s,
                )
            wait = retry_after_s
            shared = True
        else:
            wait = self.backoff_s(attempt, rand)
        if elapsed_s + wait > self.call_budget_s:
            return Decision(
                Verdict.FAIL,
                reason=f"the call's time budget of {self.call_budget_s:g}s would run out",
            )
        return Decision(Verdict.RETRY, wait_s=wait, reason="retryable", shared=shared)
