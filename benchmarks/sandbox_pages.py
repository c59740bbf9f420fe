"""How many pages per second the sandbox serves (payments, page size 200).

1. Over a real socket: `recon sandbox serve` (uvicorn on 127.0.0.1, its own process, 200k
   payments) paged by a sequential httpx.Client, with the records pre-serialised at start
   (`--prewarm sync`) and, for comparison, generated on first touch (`--prewarm off`).
2. In-process: the ASGI app called directly (no HTTP, no socket), cold and warm.
3. With latency (`--latency-ms 50`): 1, 4 and 16 requests in flight, to show that the
   sandbox's latency overlaps as a real API's does (it is awaited, never blocking).

    .venv/bin/python benchmarks/sandbox_pages.py [--payments 200000] [--page 200]
        [--latency-ms 50] [--latency-pages 120]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson

from recon.sandbox.app import DEMO_API_KEY, SandboxConfig, create_app

HEADERS = {"x-api-key": DEMO_API_KEY}
ANCHOR = "2026-11-20T00:00:00Z"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start(payments: int, prewarm: bool, *extra: str) -> tuple[subprocess.Popen[bytes], str, float]:
    port = _free_port()
    cmd = [sys.executable, "-m", "recon", "sandbox", "serve", "--port", str(port)]
    cmd += ["--payments", str(payments), "--seed", "7", "--anchor", ANCHOR]
    cmd += ["--prewarm", "sync" if prewarm else "off", *extra]
    env = {**os.environ, "RECON_SANDBOX_API_KEY": DEMO_API_KEY}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}"
    while True:
        try:
            if httpx.get(f"{base}/_sandbox/health", timeout=1).status_code == 200:
                return proc, base, time.perf_counter() - t0
        except httpx.TransportError:
            time.sleep(0.05)
        if proc.poll() is not None or time.perf_counter() - t0 > 120:
            raise RuntimeError("the sandbox did not start")


def _socket_pass(base: str, pages: int, page: int, parse: bool) -> tuple[float, int]:
    records = 0
    with httpx.Client(base_url=base, headers=HEADERS, timeout=30) as client:
        t0 = time.perf_counter()
        for k in range(pages):
            r = client.get("/api/v1/payments", params={"max-records": page, "skip": k * page})
            r.raise_for_status()
            records += len(orjson.loads(r.content)["data"]) if parse else page
        return time.perf_counter() - t0, records


async def _inprocess_pass(app: Any, pages: int, page: int) -> float:
    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message.get("body", b""))

    t0 = time.perf_counter()
    for k in range(pages):
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": "/api/v1/payments",
            "raw_path": b"/api/v1/payments",
            "root_path": "",
            "query_string": f"max-records={page}&skip={k * page}".encode(),
            "headers": [(b"x-api-key", DEMO_API_KEY.encode()), (b"host", b"bench")],
            "client": ("127.0.0.1", 1),
            "server": ("127.0.0.1", 80),
        }
        await app(scope, receive, send)
    elapsed = time.perf_counter() - t0
    assert len(sent) >= pages
    return elapsed


def _concurrent_pass(base: str, pages: int, page: int, in_flight: int) -> float:
    """Fetch `pages` pages with `in_flight` threads sharing one client; the wall time."""
    limits = httpx.Limits(max_connections=in_flight, max_keepalive_connections=in_flight)
    with (
        httpx.Client(base_url=base, headers=HEADERS, timeout=30, limits=limits) as client,
        ThreadPoolExecutor(in_flight) as pool,
    ):

        def fetch(k: int) -> None:
            r = client.get("/api/v1/payments", params={"max-records": page, "skip": k * page})
            r.raise_for_status()

        t0 = time.perf_counter()
        list(pool.map(fetch, range(pages)))
        return time.perf_counter() - t0


def _line(label: str, pages: int, seconds: float) -> None:
    print(f"{label:<46} {pages / seconds:8.0f} pages/s  ({pages} pages in {seconds:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--payments", type=int, default=200_000)
    parser.add_argument("--page", type=int, default=200)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--latency-pages", type=int, default=120)
    args = parser.parse_args()
    pages = -(-args.payments // args.page)
    print(
        f"{args.payments:,} payments, page size {args.page}, load average {os.getloadavg()[0]:.1f}"
    )

    proc, base, startup = _start(args.payments, prewarm=True)
    try:
        print(f"server start with prewarm: {startup:.1f} s")
        raw, n = _socket_pass(base, pages, args.page, parse=False)
        parsed, n2 = _socket_pass(base, pages, args.page, parse=True)
        assert n == n2 == args.payments
        _line("socket, pre-serialised, body not parsed", pages, raw)
        _line("socket, pre-serialised, client parses JSON", pages, parsed)
    finally:
        proc.terminate()
        proc.wait(timeout=15)

    proc, base, startup = _start(args.payments, prewarm=False)
    try:
        print(f"server start without prewarm: {startup:.1f} s")
        cold, _ = _socket_pass(base, pages, args.page, parse=False)
        _line("socket, cold (generated on first touch)", pages, cold)
    finally:
        proc.terminate()
        proc.wait(timeout=15)

    config = SandboxConfig(
        seed=7, payments=args.payments, anchor=datetime(2026, 11, 20, tzinfo=UTC)
    )
    app = create_app(config)
    cold_ip = asyncio.run(_inprocess_pass(app, pages, args.page))
    warm_ip = asyncio.run(_inprocess_pass(app, pages, args.page))
    _line("in-process ASGI, cold", pages, cold_ip)
    _line("in-process ASGI, warm (pre-serialised)", pages, warm_ip)

    latency = ("--latency-ms", str(args.latency_ms))
    proc, base, _ = _start(args.payments, True, *latency)
    try:
        n = min(args.latency_pages, pages)
        for in_flight in (1, 4, 16):
            seconds = _concurrent_pass(base, n, args.page, in_flight)
            _line(f"socket, {args.latency_ms} ms latency, {in_flight:>2} in flight", n, seconds)
    finally:
        proc.terminate()
        proc.wait(timeout=15)


if __name__ == "__main__":
    main()
