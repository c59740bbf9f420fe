"""The client's transport (`recon.api.transport`, `http.client` under httpx): the same bytes
on the wire as httpx's own transport, the same answers, the same exceptions for the same
failures, connections kept alive and shared, and httpx's own transport where a proxy is
configured."""

from __future__ import annotations

import contextlib
import gzip
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx
import pytest

from recon.api import ApiClient, ClientConfig
from recon.api.transport import PooledTransport, for_client

pytestmark = pytest.mark.integration

#: What a scripted server does with a request: the bytes to answer (None: close, no answer)
Script = Callable[[bytes], bytes | None]


@dataclass
class RawServer:
    """A TCP server on 127.0.0.1 that records every request's bytes and answers by script;
    a connection stays open for the next request until the script says to close it."""

    script: Script
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0
    close_after_answer: bool = False
    port: int = 0

    def serve(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):  # a client that closes early resets it
            buffer = b""
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buffer) < length:
                    buffer += conn.recv(65536)
                request, buffer = head + b"\r\n\r\n" + buffer[:length], buffer[length:]
                self.requests.append(request)
                answer = self.script(request)
                if answer is None:
                    return
                conn.sendall(answer)
                if self.close_after_answer:
                    return


@contextmanager
def raw_server(script: Script) -> Iterator[RawServer]:
    server = RawServer(script)
    listener = socket.create_server(("127.0.0.1", 0))
    server.port = listener.getsockname()[1]
    thread = threading.Thread(target=server.serve, args=(listener,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        listener.close()


def answer(body: bytes = b'{"data":[]}', *, headers: bytes = b"") -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-request-id: req_1\r\n"
        + headers
        + b"content-length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


TRANSPORTS = {"httpx": httpx.HTTPTransport, "pooled": PooledTransport}


def client(kind: str, **kwargs: float) -> httpx.Client:
    return httpx.Client(
        transport=TRANSPORTS[kind](),
        headers={"Accept": "application/json", "User-Agent": "recon-test"},
        **kwargs,  # type: ignore[arg-type]
    )


def test_the_request_on_the_wire_is_the_one_httpx_sends() -> None:
    """Request line, headers (names as written, in order) and body, byte for byte."""
    with raw_server(lambda request: answer()) as server:
        url = f"http://127.0.0.1:{server.port}/api/v1/payments?max-records=200&skip=400"
        for kind in TRANSPORTS:
            with client(kind) as http:
                http.get(url, headers={"x-api-key": "k"})
                http.post(
                    url.replace("payments?", "refunds?"),
                    content=b'{"amountMinor":5}',
                    headers={"x-api-key": "k", "Idempotency-Key": "i-1"},
                )
                http.delete(url, headers={"Authorization": "Bearer t"})
    own, pooled = server.requests[:3], server.requests[3:]
    assert pooled == own
    assert own[1].endswith(b'\r\n\r\n{"amountMinor":5}')


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_the_answer_is_read_as_httpx_reads_it(kind: str) -> None:
    """Status, headers (repeated ones too), a chunked body and a gzip body, decoded."""
    text = b'{"data":[{"id":"pay_1","note":"Zo\xc3\xab"}]}'
    packed = gzip.compress(text)
    rest = hex(len(text) - 5)[2:].encode()
    chunked = (
        b"HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\nset-cookie: a=1\r\n"
        b"set-cookie: b=2\r\n\r\n5\r\n" + text[:5] + b"\r\n" + rest + b"\r\n" + text[5:]
    ) + b"\r\n0\r\n\r\n"
    answers = iter([chunked, answer(packed, headers=b"content-encoding: gzip\r\n"), answer(b"")])
    with raw_server(lambda request: next(answers)) as server, client(kind) as http:
        url = f"http://127.0.0.1:{server.port}/x"
        first = http.get(url)
        assert (first.status_code, first.reason_phrase, first.http_version) == (
            201,
            "Created",
            "HTTP/1.1",
        )
        assert first.headers.get_list("set-cookie") == ["a=1", "b=2"]
        assert first.content == text
        second = http.get(url)
        assert second.content == text
        assert second.headers["content-encoding"] == "gzip"
        assert http.get(url).content == b""
        assert server.connections == 1  # kept alive throughout


def _cut(request: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n" + b'{"data":'


def _cut_chunked(request: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n8\r\n" + b'{"data":'


def _stall(request: bytes) -> bytes | None:
    time.sleep(0.5)
    return None


def _failure(kind: str, script: Script, close: bool) -> Exception:
    with raw_server(script) as server, client(kind, timeout=0.2) as http:
        server.close_after_answer = close
        try:
            http.get(f"http://127.0.0.1:{server.port}/x")  # the body read too
        except Exception as exc:
            return exc
    raise AssertionError("no failure")


@pytest.mark.parametrize(
    ("script", "close", "expected", "same_words"),
    [
        (_cut, True, httpx.RemoteProtocolError, True),  # the body cut short
        (_cut_chunked, True, httpx.RemoteProtocolError, True),
        (lambda request: None, False, httpx.RemoteProtocolError, True),  # closed, no answer
        (lambda request: b"SPAM\r\n\r\n", True, httpx.RemoteProtocolError, False),  # not HTTP
        (_stall, False, httpx.ReadTimeout, True),
    ],
)
def test_the_same_failure_is_the_same_exception(
    script: Script, close: bool, expected: type[Exception], same_words: bool
) -> None:
    """The same type, and for the failures a night meets (the call log keeps the words)
    the same message."""
    own, pooled = (_failure(kind, script, close) for kind in TRANSPORTS)
    assert type(own) is type(pooled) is expected
    if same_words:
        assert str(pooled) == str(own)


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_nobody_listening_is_a_connect_error(kind: str) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    with client(kind) as http, pytest.raises(httpx.ConnectError):
        http.get(f"http://127.0.0.1:{port}/x")


def test_a_connection_the_server_closed_is_not_used_again() -> None:
    with raw_server(lambda request: answer()) as server, client("pooled") as http:
        server.close_after_answer = True  # but says nothing of it (no `connection: close`)
        url = f"http://127.0.0.1:{server.port}/x"
        assert http.get(url).status_code == 200
        time.sleep(0.05)  # the server's close has arrived
        assert http.get(url).status_code == 200
        assert server.connections == 2


def test_threads_share_the_kept_alive_connections() -> None:
    def slow(request: bytes) -> bytes:
        time.sleep(0.02)
        return answer()

    with raw_server(slow) as server, client("pooled") as http:
        url = f"http://127.0.0.1:{server.port}/x"

        def work() -> None:
            for _ in range(10):
                assert http.get(url).json() == {"data": []}

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(server.requests) == 40
    assert server.connections <= 4


def test_a_body_not_read_to_its_end_closes_its_connection() -> None:
    """An answer dropped half-read (over RECON_MAX_BODY_MB) must not leave its rest to be
    read as the next answer."""
    big = answer(b"x" * 300_000)
    with raw_server(lambda request: big) as server, client("pooled") as http:
        url = f"http://127.0.0.1:{server.port}/x"
        with http.stream("GET", url) as response:
            next(response.iter_bytes())
        assert http.get(url).content == b"x" * 300_000
        assert server.connections == 2


def test_the_client_uses_it_unless_a_proxy_is_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with ApiClient(ClientConfig.for_base_url("https://h")) as plain:
        assert isinstance(plain.sender.http._transport, PooledTransport)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example.test:3128")
    assert for_client() is None
    with ApiClient(ClientConfig.for_base_url("https://h")) as proxied:
        transport = proxied.sender.http._transport
        assert isinstance(transport, httpx.HTTPTransport)
        assert proxied.sender.http._mounts  # httpx goes through the proxy, as before
