"""Shared pieces of the reliability suite (issue 7).

The environment fixture, the sandbox helper and the overrides come from tests/nightly's
conftest (imported, not copied). What is new here is a fault-injecting TCP proxy that sits
between recon and the sandbox and does what an ASGI app cannot: reset the connection, or
stall past the client's timeout, at the transport level.
"""

from __future__ import annotations

import hashlib
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import httpx

from recon.catalogue.resources import nightly_resources
from tests.night.conftest import (
    KEY,
    TOKEN,
    _env,
    overrides_for,
    sandbox,
    truth_of,
)

__all__ = [
    "KEY",
    "TABLES",
    "TOKEN",
    "FaultProxy",
    "_env",
    "fault_proxy",
    "landed_ids",
    "overrides_for",
    "read_only",
    "sandbox",
    "sandbox_state",
    "seeded",
    "truth_of",
]

TABLES = tuple(r.table for r in nightly_resources())  # the catalogue's


def read_only(db: Path | str) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(db), read_only=True)


def landed_ids(db: Path | str) -> dict[str, list[str]]:
    """Every table's ids as landed (a list: duplicates would show)."""
    con = read_only(db)
    try:
        return {t: [r[0] for r in con.execute(f"SELECT id FROM {t}").fetchall()] for t in TABLES}
    finally:
        con.close()


def sandbox_state(url: str) -> dict[str, Any]:
    data: dict[str, Any] = httpx.get(f"{url}/_sandbox/state", timeout=60).json()
    return data


# --------------------------------------------------------------------------------------
# A fault-injecting HTTP/1.1 proxy (keep-alive aware, Content-Length bodies only, which is
# what the sandbox sends).

Decide = Callable[[str, str, int], str | None]
"""(method, target, attempt through the proxy: 0 first) -> None | 'reset' | 'stall' | 'lost'.

- reset: the client's connection is reset (RST) before the request is forwarded;
- stall: nothing is forwarded and nothing answered for `stall_s`, then the socket closes;
- lost: the request is forwarded and answered upstream, then the client's connection is
  reset instead of relaying the answer (a create that happened but whose answer was lost);
- cut: the answer's head and half its body are relayed, then the connection is reset;
- drip: the answer's head is relayed, then its body one byte every `stall_s / 4` seconds
  (each read is quicker than the client's timeout, the whole answer far slower).
"""


@dataclass
class ProxyEvent:
    method: str
    target: str
    fault: str | None
    status: int | None = None
    request_id: str | None = None


@dataclass
class FaultProxy:
    upstream: tuple[str, int]
    decide: Decide
    stall_s: float = 2.0
    url: str = ""
    events: list[ProxyEvent] = field(default_factory=list)
    _attempts: dict[tuple[str, str, str], int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)

    # -- helpers -------------------------------------------------------------------------
    @staticmethod
    def _read_head(sock: socket.socket, buf: bytearray) -> bytes | None:
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            buf.extend(chunk)
        end = buf.index(b"\r\n\r\n") + 4
        head = bytes(buf[:end])
        del buf[:end]
        return head

    @staticmethod
    def _read_exact(sock: socket.socket, buf: bytearray, n: int) -> bytes:
        while len(buf) < n:
            chunk = sock.recv(max(65536, n - len(buf)))
            if not chunk:
                raise ConnectionError("upstream closed mid-body")
            buf.extend(chunk)
        body = bytes(buf[:n])
        del buf[:n]
        return body

    @staticmethod
    def _headers(head: bytes) -> dict[str, str]:
        out: dict[str, str] = {}
        for line in head.decode("latin-1").split("\r\n")[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                out[k.strip().lower()] = v.strip()
        return out

    @staticmethod
    def _reset(sock: socket.socket) -> None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()

    def faults(self, kind: str | None = None) -> list[ProxyEvent]:
        with self._lock:
            return [e for e in self.events if e.fault and (kind is None or e.fault == kind)]

    # -- per connection ------------------------------------------------------------------
    def _handle(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        cbuf, ubuf = bytearray(), bytearray()
        try:
            while not self._stop.is_set():
                head = self._read_head(client, cbuf)
                if head is None:
                    return
                method, target = head.split(b" ", 2)[:2]
                m, t = method.decode(), target.decode()
                headers = self._headers(head)
                length = int(headers.get("content-length", "0") or 0)
                body = self._read_exact(client, cbuf, length)
                # Attempts are counted per request, a create's retries by its idempotency key.
                key = (m, t, headers.get("idempotency-key", ""))
                with self._lock:
                    n = self._attempts.get(key, 0)
                    self._attempts[key] = n + 1
                fault = self.decide(m, t, n) if t.startswith("/api/") else None
                event = ProxyEvent(m, t, fault)
                with self._lock:
                    self.events.append(event)
                if fault == "reset":
                    self._reset(client)
                    return
                if fault == "stall":
                    self._stop.wait(self.stall_s)
                    client.close()
                    return
                if upstream is None:
                    upstream = socket.create_connection(self.upstream, timeout=60)
                    ubuf = bytearray()
                upstream.sendall(head + body)
                rhead = self._read_head(upstream, ubuf)
                if rhead is None:
                    raise ConnectionError("upstream closed")
                rh = self._headers(rhead)
                rbody = self._read_exact(upstream, ubuf, int(rh.get("content-length", "0") or 0))
                event.status = int(rhead.split(b" ", 2)[1])
                event.request_id = rh.get("x-request-id")
                if fault == "lost":
                    self._reset(client)
                    return
                if fault == "drip":  # the head, then the body a byte at a time
                    client.sendall(rhead)
                    for i in range(len(rbody)):
                        client.sendall(rbody[i : i + 1])
                        if self._stop.wait(self.stall_s / 4):
                            break
                    client.close()
                    return
                if fault == "cut":  # half the answer, then a reset mid-body
                    client.sendall(rhead + rbody[: len(rbody) // 2])
                    self._reset(client)
                    return
                client.sendall(rhead + rbody)
        except OSError:
            return
        finally:
            for s in (client, upstream):
                if s is not None:
                    with suppress(OSError):
                        s.close()

    def serve(self, listener: socket.socket) -> None:
        listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()


def seeded(seed: int, rate: float, kinds: tuple[str, ...], *, max_faults: int = 1) -> Decide:
    """Fault about `rate` of first attempts (pure function of seed, method, target)."""

    def decide(method: str, target: str, attempt: int) -> str | None:
        if attempt >= max_faults:
            return None
        raw = f"{seed}\x1f{method}\x1f{target}\x1f{attempt}".encode()
        h = int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "big")
        if (h % 10_000) >= int(rate * 10_000):
            return None
        return kinds[(h >> 20) % len(kinds)]

    return decide


@contextmanager
def fault_proxy(url: str, decide: Decide, *, stall_s: float = 2.0) -> Iterator[FaultProxy]:
    """A FaultProxy on 127.0.0.1 in front of `url`; `proxy.url` is its base URL."""
    parsed = httpx.URL(url)
    proxy = FaultProxy((parsed.host, parsed.port or 80), decide, stall_s=stall_s)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    thread = threading.Thread(target=proxy.serve, args=(listener,), daemon=True)
    thread.start()
    proxy.url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        yield proxy
    finally:
        proxy._stop.set()
        thread.join(timeout=5)
        listener.close()


# --------------------------------------------------------------------------------------
# A scripted HTTP server on a real socket: answers requests with the given responses in
# order (the last one repeats) and records when each request arrived.


@dataclass
class Arrival:
    at: float  # time.time() when the request arrived
    method: str
    path: str
    query: str
    headers: dict[str, str]


@dataclass
class Script:
    responses: list[Callable[[], Any]]
    arrivals: list[Arrival] = field(default_factory=list)
    answered_at: list[float] = field(default_factory=list)


@contextmanager
def scripted_server(*responses: Callable[[], Any]) -> Iterator[tuple[str, Script]]:
    """Serve `responses` (callables returning a Starlette Response) in order on 127.0.0.1."""
    import time

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from recon.sandbox.server import serve_app_in_thread

    script = Script(list(responses))

    async def endpoint(request: Request) -> Any:
        if request.url.path == "/_sandbox/health":
            return PlainTextResponse("ok")
        n = len(script.arrivals)
        script.arrivals.append(
            Arrival(
                time.time(),
                request.method,
                request.url.path,
                request.url.query,
                dict(request.headers),
            )
        )
        make = script.responses[min(n, len(script.responses) - 1)]
        response = make()
        script.answered_at.append(time.time())
        return response

    app = Starlette(
        routes=[Route("/{path:path}", endpoint, methods=["GET", "POST", "PATCH", "DELETE"])]
    )
    with serve_app_in_thread(app) as url:
        yield url, script


# --------------------------------------------------------------------------------------
# The hostile API (issue 25): `@pytest.mark.parametrize("hostile_server", [{"mode": "jump"}],
# indirect=True)`; without a parameter, an honest server of 450 payments.

import pytest  # noqa: E402

from .hostile import Hostile, hostile_api  # noqa: E402


@pytest.fixture
def hostile_server(request: pytest.FixtureRequest) -> Iterator[Hostile]:
    config: dict[str, Any] = getattr(request, "param", None) or {}
    with hostile_api(**config) as server:
        yield server
