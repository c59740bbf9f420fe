"""The HTTP/1.1 transport under recon's httpx client: the standard library's `http.client`
with a pool of kept-alive connections.

httpx's own transport (httpcore and h11) cost ~1.1 ms of CPU to send a request for a page of
200 payments and read its answer (89 kB) from the sandbox at 50 ms latency, `http.client`
~0.4 ms (one thread, 100 pages, medians of two runs each: 1,081-1,096 us against 379-404 us;
at zero latency 457-466 against 135-137 us): the thread wakes up cold for every answer, and
the less code it runs the less that costs. An account-night reads ~1,100 pages (issue 24).

httpx stays the client: the request it builds is sent as it is (the same request line and
headers, in the same order), the answer comes back as an
`httpx.Response` that httpx decodes (gzip and the rest) and reads as before, and failures
are httpx's exceptions, as its own transport raises them (`recon.api.classify` tells them
apart). TLS is verified as httpx verifies it (`httpx.create_ssl_context`); a night that
goes through a proxy from the environment keeps httpx's own transport (`for_client`).
"""

from __future__ import annotations

import http.client
import select
import ssl
import threading
import urllib.request
from collections.abc import Iterator

import httpx

__all__ = ["PooledTransport", "for_client"]

#: Idle connections kept per origin (httpx keeps 20): more than the requests a night has in
#: flight at once.
_MAX_IDLE = 20

_Origin = tuple[str, str, int]


def for_client() -> httpx.BaseTransport | None:
    """The transport a client without a test transport gets: None (httpx's own) when the
    environment names a proxy, which httpx's transport goes through and this one would not."""
    if urllib.request.getproxies():
        return None
    return PooledTransport()


class PooledTransport(httpx.BaseTransport):
    """HTTP/1.1 over `http.client`, connections kept alive and shared by threads."""

    def __init__(self) -> None:
        self._ssl: ssl.SSLContext | None = None
        self._idle: dict[_Origin, list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context of https requests: certificates and host names verified."""
        if self._ssl is None:  # made on the first https request (loading the CAs: ~30 ms of CPU)
            context = httpx.create_ssl_context(verify=True)
            context.set_alpn_protocols(["http/1.1"])
            self._ssl = context
        return self._ssl

    def _connection(self, origin: _Origin, connect_s: float | None) -> http.client.HTTPConnection:
        """An idle connection to `origin` still open, or a new one (connected)."""
        with self._lock:
            idle = self._idle.get(origin)
            while idle:
                conn = idle.pop()
                sock = conn.sock
                # Readable while idle: the server closed it (or sent what it should not)
                if sock is not None and not select.select([sock], [], [], 0)[0]:
                    return conn
                conn.close()
        scheme, host, port = origin
        conn = (
            http.client.HTTPSConnection(host, port, timeout=connect_s, context=self.ssl_context())
            if scheme == "https"
            else http.client.HTTPConnection(host, port, timeout=connect_s)
        )
        try:
            conn.connect()
        except TimeoutError as exc:
            conn.close()
            raise httpx.ConnectTimeout(str(exc) or "connect timed out") from exc
        except OSError as exc:  # refused, unreachable, name not found, TLS (ssl.SSLError)
            conn.close()
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        return conn

    def _release(self, origin: _Origin, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault(origin, [])
            if not self._closed and len(idle) < _MAX_IDLE:
                idle.append(conn)
                return
        conn.close()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        scheme = url.scheme
        if scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"Request URL has an unsupported protocol '{scheme}'")
        port = url.port or (443 if scheme == "https" else 80)
        origin = (scheme, url.host, port)
        timeouts = request.extensions.get("timeout", {})
        conn = self._connection(origin, timeouts.get("connect"))
        try:
            sock = conn.sock
            assert sock is not None
            sock.settimeout(timeouts.get("write"))
            try:
                conn.putrequest(
                    request.method,
                    url.raw_path.decode("ascii"),
                    skip_host=True,
                    skip_accept_encoding=True,
                )
                for name, value in request.headers.raw:
                    conn.putheader(name, value)
            except (http.client.HTTPException, ValueError) as exc:  # an illegal header, say
                raise httpx.LocalProtocolError(str(exc) or type(exc).__name__) from exc
            body = request.read()
            try:
                conn.endheaders(body or None)
            except TimeoutError as exc:
                raise httpx.WriteTimeout(str(exc) or "write timed out") from exc
            except OSError as exc:
                raise httpx.WriteError(str(exc) or type(exc).__name__) from exc
            sock.settimeout(timeouts.get("read"))
            try:
                answer = conn.getresponse()
            except TimeoutError as exc:
                raise httpx.ReadTimeout(str(exc) or "read timed out") from exc
            except http.client.RemoteDisconnected as exc:  # httpcore's words for it
                raise httpx.RemoteProtocolError(
                    "Server disconnected without sending a response."
                ) from exc
            except http.client.HTTPException as exc:  # a bad status line, say
                raise httpx.RemoteProtocolError(str(exc) or type(exc).__name__) from exc
            except OSError as exc:
                raise httpx.ReadError(str(exc) or type(exc).__name__) from exc
        except BaseException:
            conn.close()
            raise
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in answer.getheaders()]
        return httpx.Response(
            answer.status,
            headers=headers,
            stream=_Body(self, origin, conn, answer),
            extensions={
                "http_version": b"HTTP/1.0" if answer.version == 10 else b"HTTP/1.1",
                "reason_phrase": answer.reason.encode("latin-1", "replace"),
            },
        )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle = [conn for conns in self._idle.values() for conn in conns]
            self._idle.clear()
        for conn in idle:
            conn.close()


class _Body(httpx.SyncByteStream):
    """An answer's body as it arrives; the connection goes back to the pool once it was read
    to its end (and the server keeps it open), else it is closed."""

    def __init__(
        self,
        pool: PooledTransport,
        origin: _Origin,
        conn: http.client.HTTPConnection,
        answer: http.client.HTTPResponse,
    ) -> None:
        self._pool = pool
        self._origin = origin
        self._conn: http.client.HTTPConnection | None = conn
        self._answer = answer
        self._declared = answer.length  # Content-Length (None: chunked, or until closed)

    def __iter__(self) -> Iterator[bytes]:
        answer = self._answer
        try:
            while True:
                if answer.length == 0 and not answer.chunked:  # read to its declared end
                    answer.close()  # the connection itself stays open, for the pool
                    return
                chunk = answer.read1(65536)
                if not chunk:
                    if answer.length:  # `http.client` does not say it: h11 does
                        declared = self._declared or 0
                        raise httpx.RemoteProtocolError(
                            "peer closed connection without sending complete message body "
                            f"(received {declared - answer.length} bytes, expected {declared})"
                        )
                    return
                yield chunk
        except httpx.RemoteProtocolError:
            self.close()
            raise
        except TimeoutError as exc:
            self.close()
            raise httpx.ReadTimeout(str(exc) or "read timed out") from exc
        except http.client.IncompleteRead as exc:  # a chunked body cut short
            self.close()
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body "
                "(incomplete chunked read)"
            ) from exc
        except (http.client.HTTPException, OSError) as exc:
            self.close()
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        answer = self._answer
        if answer.isclosed() and not answer.will_close:
            self._pool._release(self._origin, conn)
        else:
            answer.close()
            conn.close()
