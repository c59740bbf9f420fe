"""A hostile imitation of the Merchant Payments API on 127.0.0.1 (issue 25).

A stdlib `ThreadingHTTPServer` that answers the list operations recon pages (every list but
payments: an empty `data`, so they end complete at once) and answers the payments list
badly on purpose, per `mode`:

- `ok`: honest paging (`hasMore`, `nextOffset` = skip + records returned);
- `jump`: asked at `skip >= jump_at`, answers `nextOffset: 10**12` (records silently skipped
  if followed);
- `endless`: one new record per page, `hasMore: true` forever, `nextOffset` = skip + 1;
- `empty_more`: every page past the first is empty with `hasMore: true` and a `nextOffset`
  that advances;
- `huge`: a 200 OK whose body is `huge_mb` MB of JSON (the record list padded with a long
  string), counted in `huge_served`;
- `delay_s`: any mode, each payments page answered that much later;
- `records`: the payments are `records` (hostile amounts, dates, control characters…);
- `changed`: `changed_id` is answered again on a later page (at `skip >= jump_at`), with
  other content than the first time (issue 38);
- `bad_utf8`: one byte of `bad_utf8_id`'s record (inside a string) is not UTF-8;
- `encodings`: any mode, each payments answer gzipped once per name listed, its
  `Content-Encoding` saying so (`["gzip", "gzip"]`: a body encoded twice);
- `trickle_headers`: any mode, each payments answer's headers sent a byte every 0.05 s,
  with a header that never ends (until the client hangs up).

Records default to `count` plain payments (`pay_000000`…). Every request is counted in
`requests` (path, query). `hostile_api(...)` is the context manager; the fixture
`hostile_server` in conftest builds one per test from `request.param` (a dict of these
arguments) or the defaults.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["Hostile", "hostile_api", "payment"]

LISTS = ("/refunds", "/disputes", "/subscriptions", "/invoices", "/payment-intents")


def payment(i: int, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": f"pay_{i:06d}",
        "amountMinor": 1000 + i,
        "currency": "EUR",
        "status": "confirmed",
        "reference": f"ORD-{i:06d}",
        "createdAt": "2026-11-01T10:00:00Z",
        "updatedAt": "2026-11-01T10:00:00Z",
    }
    record.update(fields)
    return record


@dataclass
class Hostile:
    mode: str = "ok"
    count: int = 450
    jump_at: int = 199
    huge_mb: float = 20.0
    records: list[Any] | None = None
    raw_body: bytes | None = None  # `records` mode: the page body as bytes, sent as is
    delay_s: float = 0.0  # every payments page answered this much later (a slow night)
    changed_id: str = "pay_000150"
    bad_utf8_id: str = "pay_000042"
    encodings: list[str] = field(default_factory=list)
    trickle_headers: bool = False
    url: str = ""
    requests: list[tuple[str, str]] = field(default_factory=list)
    huge_served: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def payments(self) -> list[Any]:
        if self.records is not None:
            return self.records
        return [payment(i) for i in range(self.count)]

    def payments_requests(self) -> int:
        with self.lock:
            return sum(1 for p, _ in self.requests if p.endswith("/payments"))

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, bytes]:
        if any(path.endswith(p) for p in LISTS):
            return 200, b'{"data": []}'
        if not path.endswith("/payments"):
            return 404, b'{"error": "not found"}'
        if self.delay_s:
            time.sleep(self.delay_s)
        skip = int(query.get("skip", ["0"])[0])
        size = int(query.get("max-records", ["200"])[0])
        if self.mode == "endless":
            data = [payment(skip)]
            return 200, _json({"data": data, "hasMore": True, "nextOffset": skip + 1})
        if self.mode == "empty_more" and skip > 0:
            return 200, _json({"data": [], "hasMore": True, "nextOffset": skip + size})
        if self.mode == "records" and self.raw_body is not None:
            return 200, self.raw_body
        records = self.payments
        data = records[skip : skip + size]
        more = skip + len(data) < len(records)
        nxt: int | None = skip + len(data) if more else None
        if self.mode == "jump" and skip >= self.jump_at and more:
            nxt = 10**12
        if self.mode == "changed" and skip >= self.jump_at and data:
            again = next(r for r in records if r["id"] == self.changed_id)
            data = [data[0], {**again, "amountMinor": again["amountMinor"] + 1}, *data[1:]]
        if self.mode == "bad_utf8":
            body = _json({"data": data, "hasMore": more, "nextOffset": nxt})
            marker = f'"reference": "ORD-{self.bad_utf8_id[4:]}"'.encode()
            return 200, body.replace(marker, marker[:-1] + b"\xff" + marker[-1:])
        if self.mode == "huge":
            with self.lock:
                self.huge_served += 1
            pad = "x" * int(self.huge_mb * 1024 * 1024)
            return 200, _json({"data": data, "hasMore": more, "nextOffset": nxt, "pad": pad})
        return 200, _json({"data": data, "hasMore": more, "nextOffset": nxt})


def _json(body: Any) -> bytes:
    return json.dumps(body).encode()


@contextmanager
def hostile_api(**config: Any) -> Iterator[Hostile]:
    """A `Hostile` server on a free port of 127.0.0.1; `.url` is the base URL (no /api/v1)."""
    state = Hostile(**config)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            with state.lock:
                state.requests.append((parts.path, parts.query))
            if parts.path == "/_sandbox/health":
                status, body = 200, b"ok"
            else:
                status, body = state.answer(parts.path, parse_qs(parts.query))
            payments = parts.path.endswith("/payments")
            if payments and state.trickle_headers:
                self.trickle()
                return
            if payments and state.encodings:
                for _ in state.encodings:
                    body = gzip.compress(body)
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            if payments and state.encodings:
                self.send_header("content-encoding", ", ".join(state.encodings))
            self.send_header("x-request-id", f"req_hostile_{len(state.requests)}")
            self.end_headers()
            try:
                self.wfile.write(body)
            except OSError:  # the client stopped reading (a capped body): fine
                return

        def trickle(self) -> None:
            """Headers a byte every 0.05 s, each in time for any read timeout, never ending."""
            self.close_connection = True
            head = b"HTTP/1.1 200 OK\r\nx-request-id: req_trickle\r\nx-pad: "
            try:
                for i in range(len(head)):
                    self.wfile.write(head[i : i + 1])
                    self.wfile.flush()
                while not stopped.wait(0.05):
                    self.wfile.write(b"a")
                    self.wfile.flush()
            except OSError:  # the client hung up: what a deadline does
                return

        def log_message(self, *args: Any) -> None:
            return None

    stopped = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        stopped.set()
        server.shutdown()
        server.server_close()
