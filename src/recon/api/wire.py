"""What an attempt puts on the wire and reads back, for the retry loop in `recon.api.sender`:
the query string, the request every attempt of a call shares, the cookie store, and the body
read against the attempt's deadline.

A list page is one call of one attempt, ~1,100 of them an account-night, and against a paced
provider each runs on a thread that has just woken up, where every step costs two to three
times what it costs in a tight loop (issue 24: httpx's `build_request` took ~180 us a page
there, parsing the URL it was given character by character). What does not change between
attempts is therefore made once per call (`Prepared`), and an attempt builds its request
from it.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

import httpx

from recon.errors import redact_url, secret_query_key

__all__ = [
    "BadEncoding",
    "Cookies",
    "Prepared",
    "TooLarge",
    "content_encoding",
    "logged_query",
    "query_string",
    "read_body",
]

#: What `urlencode` (`quote_plus`) writes as it is: a key or value of these alone needs no
#: quoting (`max-records=200`, `skip=4000`), the rest goes through `urlencode`.
_PLAIN = re.compile(r"[A-Za-z0-9_.~-]*")


def query_string(params: Mapping[str, str | int]) -> str:
    """`params` as the query string httpx writes for them (`httpx.QueryParams`)."""
    parts = []
    for key, value in params.items():
        text = "true" if value is True else "false" if value is False else str(value)
        if _PLAIN.fullmatch(key) and _PLAIN.fullmatch(text):
            parts.append(f"{key}={text}")
        else:
            parts.append(urlencode([(key, text)]))
    return "&".join(parts)


class Cookies(httpx.Cookies):
    """httpx's cookie store, which hands the jar only the answers that set a cookie: httpx
    builds urllib request and response copies of every answer for it (~60 us a page)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers or "set-cookie2" in response.headers:
            super().extract_cookies(response)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A call's request as far as its attempts share it, and the call log's view of it.

    `headers` are the client's own merged with the call's, in the order httpx's
    `build_request` merges them; `path` and `query` are what the call log records (the
    URL's path, its query with secret-looking values masked).
    """

    method: str
    url: httpx.URL
    call_headers: Mapping[str, str]
    headers: httpx.Headers
    content: bytes | None
    path: str
    query: str

    @classmethod
    def of(
        cls,
        client: httpx.Client,
        method: str,
        url: str,
        headers: Mapping[str, str],
        content: bytes | None,
        *,
        merged: dict[tuple[tuple[str, str], ...], httpx.Headers] | None = None,
    ) -> Prepared:
        """`merged`: the client's headers merged with each set of a call's seen so far
        (a list's calls all send the same): made once, not at every call."""
        target = httpx.URL(url)
        key = tuple(headers.items())
        both = merged.get(key) if merged is not None else None
        if both is None:
            both = httpx.Headers(client.headers)
            both.update(headers)
            if merged is not None:
                merged[key] = both
        return cls(method, target, headers, both, content, target.path, logged_query(target))

    def request(self, client: httpx.Client, timeout: float) -> httpx.Request:
        """One attempt's request, with `timeout` (seconds) for each of its phases.

        The same request `client.build_request` makes, without parsing the URL and merging
        the headers again; a client holding cookies (a provider that set one) or a URL
        relative to its base goes through `build_request`, which adds them.
        """
        if client.cookies or self.url.is_relative_url:
            return client.build_request(
                self.method,
                self.url,
                content=self.content,
                headers=self.call_headers,
                timeout=timeout,
            )
        return httpx.Request(
            self.method,
            self.url,
            content=self.content,
            headers=self.headers,
            extensions={"timeout": httpx.Timeout(timeout).as_dict()},
        )


def logged_query(url: httpx.URL) -> str:
    """`url`'s query as the call log keeps it, secret-looking values masked (`redact_url`):
    a query of plain names and values none of which looks secret is kept as it is, which is
    what `redact_url` gives it, without parsing it and writing it again."""
    query = url.query.decode("ascii", "replace")
    if not query:
        return query
    for pair in query.split("&"):
        name, equals, value = pair.partition("=")
        if not (
            equals
            and name
            and _PLAIN.fullmatch(name)
            and _PLAIN.fullmatch(value)
            and not secret_query_key(name)
        ):
            return redact_url("http://h/?" + query).split("?", 1)[1]
    return query


class TooLarge(Exception):
    """The answer is larger than the cap: it was read no further."""


class BadEncoding(Exception):
    """The answer's `Content-Encoding` is refused (more than one layer): never decoded."""


#: The encodings httpx asks for (`Accept-Encoding: gzip, deflate`) and how zlib reads them.
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class _Inflate:
    """One layer of gzip or deflate, decoded no further than asked: a small body that
    inflates a thousandfold (a gzip bomb) never grows past the cap in memory."""

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._zlib = zlib.decompressobj(_WBITS[encoding])
        self._started = False

    def decode(self, data: bytes, limit: int) -> bytes:
        """`data` decoded, at most `limit` bytes of it (more pending: `limit` returned)."""
        try:
            out = self._zlib.decompress(data, limit)
        except zlib.error:
            if self._encoding != "deflate" or self._started:
                raise
            # "deflate" is sent with the zlib wrapper or without it (raw), as httpx reads it
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._zlib.decompress(data, limit)
        self._started = True
        return out

    def flush(self, limit: int) -> bytes:
        """What is left once the body has all arrived, at most `limit` bytes of it."""
        return self._zlib.flush(limit)


def content_encoding(headers: httpx.Headers) -> str | None:
    """The one encoding to undo (`gzip`, `deflate`), None for none (or one httpx does not
    ask for, read as is, as httpx reads it); more than one layer is `BadEncoding`."""
    layers = [
        value.strip().lower()
        for value in headers.get_list("content-encoding", split_commas=True)
        if value.strip() and value.strip().lower() != "identity"
    ]
    if len(layers) > 1:
        raise BadEncoding(", ".join(layers))
    return layers[0] if layers and layers[0] in _WBITS else None


def read_body(
    streamed: httpx.Response,
    request: httpx.Request,
    *,
    cap: int,
    deadline: float | None,
    clock: Callable[[], float],
) -> bytes:
    """The decoded body of a streamed answer, read chunk by chunk against `deadline` (on
    `clock`): httpx's timeouts are per socket read, so an answer trickling in a byte at a
    time would otherwise never end (`httpx.ReadTimeout`; the transport also keeps every
    socket read to the attempt's deadline, `recon.api.transport`). Over `cap` bytes,
    declared, received or decoded, it stops there (`TooLarge`): the rest is never held.
    One `Content-Encoding` layer at most (gzip or deflate), decoded here, never past the
    cap; more is `BadEncoding`, before a byte of the body is read."""
    declared = streamed.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise TooLarge
    encoding = content_encoding(streamed.headers)
    if streamed.is_stream_consumed:  # built whole (`httpx.MockTransport`): httpx decoded it
        if len(streamed.content) > cap:
            raise TooLarge
        return streamed.content
    inflate = _Inflate(encoding) if encoding is not None else None
    chunks: list[bytes] = []
    size = received = 0
    try:
        for raw in streamed.iter_raw():
            received += len(raw)
            if received > cap:
                raise TooLarge
            chunk = raw if inflate is None else inflate.decode(raw, cap - size + 1)
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:
                raise TooLarge
            if deadline is not None and clock() > deadline:
                raise httpx.ReadTimeout(
                    "the answer did not arrive in full within the attempt's time",
                    request=request,
                )
        if inflate is not None:
            rest = inflate.flush(cap - size + 1)
            chunks.append(rest)
            if size + len(rest) > cap:
                raise TooLarge
    except zlib.error as exc:  # as httpx says it of a body that is not what it claims
        message = f"{encoding} body cannot be decoded: {exc}"
        raise httpx.DecodingError(message, request=request) from exc
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
