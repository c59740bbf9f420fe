"""A trail line's bytes: its hash and the chain's start (`GENESIS`), its seal under
`RECON_TRAIL_KEY` (an HMAC-SHA256 as its last field), and reading the trail's lines from
the file without holding it whole (the last line read backwards, lines counted a block at
a time). The trail itself, its writing and its events, is recon.findings.acks; checking it,
recon.findings.verify."""

from __future__ import annotations

import hashlib
import hmac
import os
import re

import orjson

__all__ = [
    "BACK_BLOCK",
    "GENESIS",
    "count_lines",
    "has_prev",
    "last_line",
    "line_hash",
    "seal_of",
    "sealed",
    "split_lines",
    "trail_key",
]

GENESIS = hashlib.sha256(b"").hexdigest()  # `prev` of the first line


def line_hash(line: bytes) -> str:
    """The SHA-256 (hex) of one line's bytes, without its newline."""
    return hashlib.sha256(line).hexdigest()


def trail_key() -> bytes | None:
    """`RECON_TRAIL_KEY`, the key that seals every line (HMAC-SHA256), if set."""
    key = os.environ.get("RECON_TRAIL_KEY") or ""
    return key.encode() if key.strip() else None


SEAL = re.compile(rb',"seal":"([0-9a-f]{64})"\}$')


def sealed(body: bytes, key: bytes) -> bytes:
    """`body` (a JSON object's bytes) with `seal`, the HMAC of those bytes, as its last field."""
    digest = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    return body[:-1] + b',"seal":"' + digest + b'"}'


def seal_of(line: bytes, key: bytes) -> bool | None:
    """Whether `line`'s seal is the HMAC of the rest of it under `key` (None: no seal)."""
    m = SEAL.search(line)
    if m is None:
        return None
    body = line[: m.start()] + b"}"
    expected = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    return hmac.compare_digest(expected, m.group(1))


def split_lines(raw: bytes) -> list[bytes]:
    """The trail's lines, without their newlines (a cut last line included)."""
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last line
    return lines


def has_prev(line: bytes) -> bool | None:
    """True/False if the line parses as an object (with/without `prev`); None if not."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return ("prev" in data) if isinstance(data, dict) else None


BACK_BLOCK = 65536  # bytes read at a time backwards from the end, for the last line


def last_line(fd: int, size: int) -> tuple[int, int, bool]:
    """Where the last line of the first `size` (> 0) bytes of the trail lies — (start, end)
    without its newline — and whether it is cut (no newline ends it): read backwards from
    the end a block at a time, never the whole file."""
    cut = os.pread(fd, 1, size - 1) != b"\n"
    end = size if cut else size - 1
    start = end
    while start > 0:
        lo = max(0, start - BACK_BLOCK)
        part = os.pread(fd, start - lo, lo)
        nl = part.rfind(b"\n")
        if nl >= 0:
            start = lo + nl + 1
            break
        start = lo
    return start, end, cut


def count_lines(fd: int, size: int) -> int:
    """How many lines the first `size` bytes of the trail hold (a cut last line counts):
    read whole a block at a time, so only when the warehouse's record cannot say
    (recon.findings.acks) or a line number must be exact (`AckLog.head`)."""
    count, pos, last = 0, 0, b"\n"
    while pos < size:
        chunk = os.pread(fd, min(1 << 22, size - pos), pos)
        if not chunk:
            break
        count += chunk.count(b"\n")
        last = chunk[-1:]
        pos += len(chunk)
    return count + (last != b"\n")
