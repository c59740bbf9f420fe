"""The send path: one logical call, retried, classified, recorded.

`Sender.call` runs the retry loop (decisions come from the sans-IO `RetryPolicy`),
`_attempt` sends once and classifies what came back (`recon.api.classify`; a refused
answer's error, `recon.api.attempts`). Every attempt is reported to `on_attempt` as a
`CallRecord` (`attempts.call_record`), with the time it waited before it went out.
Secrets live only in the per-request headers: never in the client's default headers, a
log line, an exception or a record. `ApiClient` (the operations) and the scans sit on top
of this.
"""

from __future__ import annotations

import random as _random
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

import httpx
import orjson
from pydantic import ValidationError

from recon.api.attempts import call_record, failed_status, refused
from recon.api.classify import Attempt, Expect, classify_success, transport_failure
from recon.api.concurrency import AdaptiveLimit
from recon.api.config import ClientConfig
from recon.api.ratelimit import SharedRateLimiter
from recon.api.retry import Decision, RetryPolicy, Verdict
from recon.api.transport import attempt_deadline, client_transports
from recon.api.wire import BadEncoding, Cookies, Prepared, TooLarge, query_string, read_body
from recon.catalogue.models import ApiModel, CallRecord
from recon.errors import ApiError, ConfigError, RetryAfterTooLongError
from recon.paging.ahead import DROPPED, DroppedError
from recon.paging.paginators import Params

__all__ = [
    "Answer",
    "Auth",
    "Op",
    "Params",
    "Sender",
    "default_random",
    "utcnow",
]

Auth = Literal["key", "bearer"]  # the same as `recon.catalogue.resources.Auth`
M = TypeVar("M", bound=ApiModel)

_USER_AGENT = "recon/0.1 (+https://github.com/recon)"


def utcnow() -> datetime:
    """The wall clock call records are stamped with."""
    return datetime.now(UTC)


default_random = _random.random


@dataclass(frozen=True, slots=True)
class Op:
    """One logical call: what to send, which credential, what shape the answer must have."""

    resource: str
    method: str
    path: str
    auth: Auth = "key"
    expect: Expect = "object"
    params: Mapping[str, str | int] = field(default_factory=dict)
    body: Any = None
    idempotency_key: str | None = None


@dataclass(slots=True)
class Answer:
    """A successful call's parsed body, request id and status (and the body's bytes)."""

    body: Any
    request_id: str | None
    status: int
    content: bytes = b""
    # The last attempt's time waiting for the provider (sent -> headers) and reading and
    # parsing its answer after that (seconds, on the sender's clock)
    wait_s: float = 0.0
    read_s: float = 0.0


class Sender:
    """Sends `Op`s for one client: retries, the shared rate limiter, the call log."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        on_attempt: Callable[[CallRecord], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
        wall_clock: Callable[[], datetime] = utcnow,
        limiter: SharedRateLimiter | None = None,
        gate: AdaptiveLimit | None = None,
    ) -> None:
        self.config = config
        self.on_attempt = on_attempt
        self.clock = clock
        self.sleep = sleep
        self._random = random
        self._wall_clock = wall_clock
        self._secrets = config.secret_values()
        self._max_body_bytes = int(config.max_body_mb * 1024 * 1024)
        self.policy = RetryPolicy(
            max_attempts=config.max_attempts,
            call_budget_s=config.call_budget_s,
            retry_after_cap_s=config.retry_after_cap_s,
            backoff_initial_s=config.backoff_initial_s,
            backoff_max_s=config.backoff_max_s,
        )
        # A narrowing request (issue 13) re-reads part of a page that already failed for
        # good: one retry tells a flaky answer from a record that cannot be read.
        self.narrow_policy = RetryPolicy(
            max_attempts=min(2, config.max_attempts),
            call_budget_s=config.call_budget_s,
            retry_after_cap_s=config.retry_after_cap_s,
            backoff_initial_s=config.backoff_initial_s,
            backoff_max_s=config.backoff_max_s,
        )
        interval = 1.0 / config.rate_limit if config.rate_limit else 0.0
        self.limiter = limiter or SharedRateLimiter(
            clock=clock, sleep=sleep, min_interval_s=interval
        )
        self.gate = gate or AdaptiveLimit(
            fixed=config.concurrency, cap=config.max_in_flight, initial=2, clock=clock
        )
        self._in_flight: dict[str, int] = {}  # per resource, for the progress display
        # The client's headers merged with a call's (`Prepared.of`), per set of the call's
        self._merged: dict[tuple[tuple[str, str], ...], httpx.Headers] = {}
        self._count_lock = threading.Lock()
        # TLS verification is always on: no setting turns it off (nor in `recon.api.transport`).
        # Proxies come from the environment through `client_transports` (loopback never
        # through one); a `transport` given (a test's) is used alone, whatever the environment.
        own, mounts = client_transports() if transport is None else (transport, {})
        self.http = httpx.Client(
            transport=own,
            mounts=mounts,
            trust_env=False,
            timeout=config.timeout_s,
            verify=True,
            follow_redirects=False,
            headers={"Accept": "application/json", "User-Agent": _USER_AGENT},
        )
        self.http._cookies = Cookies()  # the client's own store (httpx<0.29 keeps it there)

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    def in_flight(self, resource: str) -> int:
        """Requests of `resource` in flight now."""
        return self._in_flight.get(resource, 0)

    def _count(self, resource: str, delta: int) -> None:
        with self._count_lock:
            self._in_flight[resource] = self._in_flight.get(resource, 0) + delta

    def _headers(self, op: Op) -> dict[str, str]:
        headers: dict[str, str] = {}
        if op.auth == "bearer":
            token = self.config.bearer_token
            if token is None or not token.get_secret_value():
                raise ConfigError(
                    "RECON_BEARER_TOKEN",
                    f"is not set; {op.method} {op.path} authenticates with a bearer token",
                )
            headers["Authorization"] = f"Bearer {token.get_secret_value()}"
        else:
            key = self.config.api_key
            if key is None or not key.get_secret_value():
                raise ConfigError("RECON_API_KEY", "is not set")
            headers["x-api-key"] = key.get_secret_value()
        if op.idempotency_key is not None:
            headers[self.config.idempotency_header] = op.idempotency_key
        if op.body is not None:
            headers["Content-Type"] = "application/json"
        return headers

    def call(
        self, op: Op, request_ids: list[str] | None = None, *, policy: RetryPolicy | None = None
    ) -> Answer:
        """Run `op` with retries; return its answer or raise the last attempt's error.

        The request id of every attempt that got one is appended to `request_ids`. Each
        attempt holds a place in the concurrency gate while it is in flight.
        """
        policy = policy or self.policy
        headers = self._headers(op)  # built once: the idempotency key is the same every retry
        content = orjson.dumps(op.body) if op.body is not None else None
        url = self.config.api_root + op.path
        if op.params:  # the query written once: httpx would parse the URL twice per attempt
            url += "?" + query_string(op.params)
        prepared = Prepared.of(
            self.http,
            op.method,
            url,
            headers,
            content,
            merged=self._merged if op.idempotency_key is None else None,
        )
        call_id = uuid.uuid4().hex
        start = self.clock()
        attempt = 0
        waited = 0.0  # held back before this attempt: backoff, then the shared limiter
        while True:
            attempt += 1
            # A place in the gate first, then the rate limiter's slot: a request that waits
            # for the gate must not hold a slot of the provider's rate meanwhile.
            self.gate.acquire()
            try:
                waited += self.limiter.wait()
                dropped = DROPPED.get()
                if dropped is not None and dropped.is_set():  # fetched ahead, not wanted
                    raise DroppedError("no longer wanted")
                remaining = self.config.call_budget_s - (self.clock() - start)
                timeout = max(0.001, min(self.config.timeout_s, remaining))
                request = prepared.request(self.http, timeout)
            except BaseException:
                self.gate.cancel()
                raise
            self._count(op.resource, 1)
            t0 = self.clock()
            got: Attempt | None = None
            try:
                with attempt_deadline(timeout):  # every socket read too (recon.api.transport)
                    got = self._attempt(request, op, deadline=t0 + timeout)
            finally:
                t1 = self.clock()
                latency_s = t1 - t0
                self._count(op.resource, -1)
                status = got.status if got is not None else None
                self.gate.release(latency_s if status else None, dropped=status == 429)
            result = got
            latency_ms = latency_s * 1000.0
            decision = policy.decide(
                result.outcome,
                attempt=attempt,
                elapsed_s=self.clock() - start,
                status=result.status,
                retry_after_s=result.retry_after_s,
                rand=self._random(),
            )
            self._record(call_id, op, prepared, attempt, result, decision, latency_ms, waited)
            if request_ids is not None and result.request_id:
                request_ids.append(result.request_id)
            if decision.verdict is Verdict.DONE:
                headers_at = t1 if result.answered_at is None else result.answered_at
                return Answer(
                    result.body,
                    result.request_id,
                    result.status or 0,
                    result.content,
                    wait_s=headers_at - t0,
                    read_s=t1 - headers_at,
                )
            if decision.verdict is Verdict.RETRY:
                waited = 0.0
                if decision.shared:  # everybody waits, this call included (at `wait()`)
                    self.limiter.pause(decision.wait_s)
                else:
                    self.sleep(decision.wait_s)
                    waited = decision.wait_s
                continue
            if decision.verdict is Verdict.WAIT_TOO_LONG:
                raise RetryAfterTooLongError(
                    requested_s=decision.requested_s or 0.0,
                    cap_s=policy.retry_after_cap_s,
                    request_id=result.request_id,
                    what=f"{op.method} {prepared.path}",
                )
            error = result.error
            assert error is not None
            if isinstance(error, ApiError):
                error.attempts = attempt
            raise error

    def _attempt(self, request: httpx.Request, op: Op, *, deadline: float | None = None) -> Attempt:
        """Send `request` once and classify the result; never raises for HTTP trouble.

        The body is read against `deadline` (the attempt's time on the client's clock,
        `recon.api.wire.read_body`). A connection that breaks after the headers arrived
        keeps the request id they carried. The attempt says when the headers came
        (`Attempt.answered_at`).
        """
        try:
            streamed = self.http.send(request, stream=True)
        except httpx.HTTPError as exc:
            return transport_failure(exc, request, self._secrets)
        answered_at = self.clock()
        try:
            got = self._answered(streamed, request, op, deadline)
        finally:
            streamed.close()
        got.answered_at = answered_at
        return got

    def _answered(
        self, streamed: httpx.Response, request: httpx.Request, op: Op, deadline: float | None
    ) -> Attempt:
        """The attempt an answer whose headers came makes: its body read, then classified."""
        request_id = streamed.headers.get("x-request-id") or streamed.headers.get("request-id")
        try:
            content = read_body(
                streamed, request, cap=self._max_body_bytes, deadline=deadline, clock=self.clock
            )
        except TooLarge:
            mb = self._max_body_bytes / 1024 / 1024
            message = f"answer larger than RECON_MAX_BODY_MB ({mb:g} MB): read no further"
            return refused(streamed, request, request_id, "body_too_large", message, self._secrets)
        except BadEncoding as exc:
            message = f"answer encoded more than once (Content-Encoding: {exc}): not decoded"
            return refused(streamed, request, request_id, "bad_encoding", message, self._secrets)
        except httpx.HTTPError as exc:
            return transport_failure(exc, request, self._secrets, request_id=request_id)

        def whole() -> httpx.Response:
            """The decoded body as a plain response (headers kept, minus the transfer ones)."""
            return httpx.Response(
                streamed.status_code,
                headers=[
                    (k, v)
                    for k, v in streamed.headers.multi_items()
                    if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
                ],
                content=content,
                request=request,
            )

        status = streamed.status_code
        if 200 <= status < 300:
            return classify_success(status, content, op.expect, request_id, self._secrets, whole)
        scheme = "bearer" if op.auth == "bearer" else "api_key"
        return failed_status(whole(), scheme, self._secrets, self._wall_clock())

    def _record(
        self,
        call_id: str,
        op: Op,
        prepared: Prepared,
        attempt: int,
        result: Attempt,
        decision: Decision,
        latency_ms: float,
        waited_s: float,
    ) -> None:
        if self.on_attempt is None:
            return
        self.on_attempt(
            call_record(
                call_id=call_id,
                resource=op.resource,
                method=op.method,
                prepared=prepared,
                attempt=attempt,
                result=result,
                decision=decision,
                latency_ms=latency_ms,
                waited_s=waited_s,
                at=self._wall_clock(),
            )
        )

    def model(self, cls: type[M], answer: Answer, op: Op) -> M:
        """`answer`'s body as a `cls`; a body of another shape is an `ApiError`."""
        try:
            return cls.from_json(answer.body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            raise ApiError.unexpected_shape(
                status=answer.status,
                what=cls.__name__,
                problem=f"{where}: {first['msg']}",
                request_id=answer.request_id,
                method=op.method,
                url=self.config.api_root + op.path,
            ) from None
