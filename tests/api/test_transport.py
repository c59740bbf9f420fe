"""The client's transport (`recon.api.transport`: httpx's own, its sockets kept to the
attempt's deadline): the same bytes on the wire as httpx's plain transport, the same
answers, the same exceptions for the same failures, connections kept alive and shared, and
the environment's proxies mounted (never for loopback)."""

from __future__ import annotations

import contextlib
import gzip
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from recon.api import ApiClient, ClientConfig
from recon.api.transport import Transport, client_transports
from recon.errors import ApiError, ConfigError, TransportError

pytestmark = pytest.mark.integration

#: What a scripted server does with a request: the bytes to answer (None: close, no answer;
#: an iterator: each piece sent as it comes, e.g. a byte at a time)
Script = Callable[[bytes], bytes | Iterator[bytes] | None]


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
                for piece in [answer] if isinstance(answer, bytes) else answer:
                    conn.sendall(piece)
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


TRANSPORTS = {"httpx": httpx.HTTPTransport, "pooled": Transport}


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


def test_the_client_uses_it_and_mounts_the_proxies_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with ApiClient(ClientConfig.for_base_url("https://h")) as plain:
        assert isinstance(plain.sender.http._transport, Transport)
        assert not plain.sender.http._mounts
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example.test:3128")
    with ApiClient(ClientConfig.for_base_url("https://h")) as proxied:
        http = proxied.sender.http
        assert isinstance(http._transport, Transport)
        through = http._transport_for_url(httpx.URL("https://payments.example.test/api/v1"))
        assert isinstance(through, Transport)
        assert through is not http._transport
        for loopback in ("https://127.0.0.1:8000/x", "https://localhost/x", "https://[::1]/x"):
            assert http._transport_for_url(httpx.URL(loopback)) is http._transport


PROXY_VARIABLES = tuple(
    name
    for scheme in ("http", "https", "all", "no")
    for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY")
)


# -- hostile answers through the whole client (issue 36 point 4, issue 38 point 4) ----------


def api(port: int, **settings: Any) -> ApiClient:
    config = ClientConfig.for_base_url(
        f"http://127.0.0.1:{port}", api_key=SecretStr("k-secret"), max_attempts=1, **settings
    )
    return ApiClient(config)


def _call_in_thread(fn: Callable[[], object], *, bound_s: float = 30.0) -> BaseException | None:
    """`fn`'s exception (None: it returned); fails the test if it is still running after
    `bound_s` (the deadline under test is fifty times shorter)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            fn()
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(bound_s)
    assert not worker.is_alive(), "the attempt outlived its deadline"
    return outcome[0]


def test_headers_trickled_a_byte_at_a_time_end_the_attempt_at_its_deadline() -> None:
    """Each byte comes well within the read timeout, the headers never end (a header line
    that grows for ever): the attempt must still end at its deadline (it held 91 s)."""
    stop = threading.Event()

    def trickle(request: bytes) -> Iterator[bytes]:
        yield b"HTTP/1.1 200 OK\r\nx-request-id: req_slow\r\nx-pad: "
        while not stop.wait(0.05):
            yield b"a"

    with raw_server(trickle) as server, api(server.port, timeout_s=0.3, call_budget_s=0.6) as c:
        try:
            error = _call_in_thread(c.list_disputes)
        finally:
            stop.set()
    assert isinstance(error, TransportError)
    assert error.kind == "timeout"


def test_a_body_encoded_twice_is_refused_with_its_request_id_not_decoded() -> None:
    """`Content-Encoding: gzip, gzip`: 20 MB of zeros in ~200 bytes; never inflated."""
    bomb = gzip.compress(gzip.compress(bytes(20 * 1024 * 1024)))
    headers = b"content-encoding: gzip, gzip\r\n"
    with raw_server(lambda request: answer(bomb, headers=headers)) as server, api(server.port) as c:
        with pytest.raises(ApiError) as info:
            c.list_disputes()
        assert len(server.requests) == 1  # not retried: it would be the same again
    assert info.value.code == "bad_encoding"
    assert info.value.request_id == "req_1"
    assert "gzip, gzip" in str(info.value)


def test_a_gzip_bomb_is_decoded_no_further_than_the_cap() -> None:
    """One layer is allowed; 40 MB of zeros gzipped to ~40 kB must not be inflated whole
    in memory to find out that it is over RECON_MAX_BODY_MB (1 MB here)."""
    bomb = gzip.compress(bytes(40 * 1024 * 1024))
    headers = b"content-encoding: gzip\r\n"
    with (
        raw_server(lambda request: answer(bomb, headers=headers)) as server,
        api(server.port, max_body_mb=1) as c,
    ):
        tracemalloc.start()
        try:
            with pytest.raises(ApiError) as info:
                c.list_disputes()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert info.value.code == "body_too_large"
    assert info.value.request_id == "req_1"
    assert peak < 8 * 1024 * 1024, f"{peak / 1e6:.0f} MB held for a 1 MB cap"


@pytest.mark.parametrize(
    "pack",
    [gzip.compress, zlib.compress, lambda b: zlib.compress(b)[2:-4]],  # deflate, raw deflate
    ids=["gzip", "deflate", "raw-deflate"],
)
def test_one_layer_of_encoding_is_decoded(pack: Callable[[bytes], bytes]) -> None:
    name = b"gzip" if pack is gzip.compress else b"deflate"
    body = b'{"data":[{"id":"dp_1","note":"Zo\xc3\xab"}]}'
    headers = b"content-encoding: " + name + b"\r\n"
    with (
        raw_server(lambda request: answer(pack(body), headers=headers)) as server,
        api(server.port) as c,
    ):
        page = c.list_disputes()
    assert [d.id for d in page.data] == ["dp_1"]


def test_a_dead_proxy_never_carries_loopback_traffic(monkeypatch: pytest.MonkeyPatch) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, dead)
    with raw_server(lambda request: answer()) as server, api(server.port) as c:
        assert c.list_disputes().data == []
        assert c.sender.http._mounts  # the proxy is mounted, for other hosts
    for name, value in (("http_proxy", dead), ("ALL_PROXY", "socks5://127.0.0.1:1")):
        _, mounts = client_transports({name: value})
        assert mounts["all://127.0.0.1"] is None


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HTTP_PROXY", "http://user:s3cret@proxy.example.test:notaport"),
        ("HTTPS_PROXY", "ftp://user:s3cret@proxy.example.test:21"),
        ("https_proxy", "http://[::1"),
        ("ALL_PROXY", "socks4://user:s3cret@proxy.example.test:1080"),
    ],
)
def test_a_malformed_proxy_url_is_a_bad_setting_naming_its_variable(
    name: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in PROXY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        api(1)
    assert info.value.setting == name
    assert "s3cret" not in str(info.value)
    assert "\n" not in str(info.value)


def test_a_socks_proxy_is_mounted() -> None:
    """httpx's socks extra is installed: ALL_PROXY=socks5://… builds its transport."""
    _, mounts = client_transports(
        {"ALL_PROXY": "socks5://127.0.0.1:1080", "NO_PROXY": "internal.example.test,10.0.0.1"}
    )
    assert isinstance(mounts["all://"], Transport)
    assert mounts["all://*internal.example.test"] is None
    assert mounts["all://10.0.0.1"] is None
    assert client_transports({"ALL_PROXY": "socks5://127.0.0.1:1080", "NO_PROXY": "*"})[1] == {}


@contextmanager
def socks5_proxy(upstream_port: int) -> Iterator[tuple[int, list[bytes]]]:
    """A SOCKS5 proxy on 127.0.0.1 (no auth, CONNECT only) that sends every connection to
    `upstream_port` on 127.0.0.1, whatever host it is asked for; yields its port and the
    hosts asked for."""
    asked: list[bytes] = []

    def relay(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def handle(client: socket.socket) -> None:
        with client, contextlib.suppress(OSError):
            greeting = client.recv(2)
            client.recv(greeting[1])  # the methods offered
            client.sendall(b"\x05\x00")  # no authentication
            head = client.recv(4)  # VER CMD RSV ATYP
            if head[:2] != b"\x05\x01" or head[3] != 3:  # CONNECT to a domain name only
                return
            asked.append(client.recv(client.recv(1)[0]))
            client.recv(2)  # the port
            with socket.create_connection(("127.0.0.1", upstream_port)) as upstream:
                client.sendall(b"\x05\x00\x00\x01" + bytes(4) + b"\x00\x00")
                back = threading.Thread(target=relay, args=(upstream, client), daemon=True)
                back.start()
                relay(client, upstream)
                back.join(5)

    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1], asked
    finally:
        listener.close()


def test_a_socks5_proxy_carries_the_api_traffic(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ALL_PROXY=socks5h://…` (httpx's socks extra): the API's host name is resolved by the
    proxy, the answer comes back through it, with the attempt's deadline all the same."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with (
        raw_server(lambda request: answer()) as server,
        socks5_proxy(server.port) as (proxy_port, asked),
    ):
        monkeypatch.setenv("ALL_PROXY", f"socks5h://127.0.0.1:{proxy_port}")
        config = ClientConfig.for_base_url(
            "http://payments.example.test",
            api_key=SecretStr("k"),
            allow_insecure_http=True,
            max_attempts=1,
        )
        with ApiClient(config) as client:
            assert client.list_disputes().data == []
    assert asked == [b"payments.example.test"]
    assert server.requests[0].startswith(b"GET /api/v1/disputes?")


@pytest.mark.parametrize(
    "proxy", [None, "http://proxy.example.test:3128", "socks5://proxy.example.test:1080"]
)
def test_every_pool_kind_opens_its_connections_through_the_deadline_backend(
    proxy: str | None,
) -> None:
    """The one private attribute recon sets on the pool httpx builds: should httpx or
    httpcore move it, this fails (and the trickle tests above hang to their bound)."""
    from recon.api.transport import _Backend

    transport = Transport(proxy=httpx.Proxy(proxy) if proxy else None)
    assert isinstance(transport._pool._network_backend, _Backend)
    assert transport.ssl_context() is Transport().ssl_context()  # the CAs loaded once
