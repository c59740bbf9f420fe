"""The sandbox over a real socket: serve_in_thread and `recon sandbox serve`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from recon.sandbox.app import SandboxConfig, create_app
from recon.sandbox.server import serve_in_thread

from .sandbox_support import ANCHOR, BEARER, KEY


@pytest.mark.integration
def test_serve_in_thread_answers_and_stops() -> None:
    config = SandboxConfig(seed=2, payments=450, anchor=ANCHOR)
    with serve_in_thread(config) as base:
        assert base.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=base, timeout=10) as client:
            ids: list[str] = []
            skip: int | None = 0
            while skip is not None:
                r = client.get(
                    "/api/v1/payments", params={"max-records": 200, "skip": skip}, headers=KEY
                )
                assert r.status_code == 200
                ids += [p["id"] for p in r.json()["data"]]
                skip = r.json()["nextOffset"]
            assert len(set(ids)) == 450
            assert client.get(f"/api/v1/payments/{ids[0]}", headers=BEARER).json()["id"] == ids[0]
            assert client.get("/api/v1/payments", headers=BEARER).status_code == 401
        port = int(base.rsplit(":", 1)[1])
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{base}/_sandbox/health", timeout=1)
    # the port is free again
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.integration
@pytest.mark.parametrize("custom_key", [False, True])
def test_serve_command_prints_the_demo_key_only(custom_key: bool) -> None:
    port = _free_port()
    env = {**os.environ}
    env.pop("RECON_SANDBOX_API_KEY", None)
    if custom_key:
        env["RECON_SANDBOX_API_KEY"] = "a-very-secret-key"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "recon",
            "sandbox",
            "serve",
            "--port",
            str(port),
            "--payments",
            "100",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        key = "a-very-secret-key" if custom_key else "sandbox-demo-key"
        deadline = time.monotonic() + 120  # a start-up bound, generous for a loaded machine
        while True:
            try:
                r = httpx.get(
                    f"http://127.0.0.1:{port}/api/v1/disputes",
                    headers={"x-api-key": key},
                    timeout=2,
                )
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        assert r.status_code == 200
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=15)
    text = out.decode()
    assert f"http://127.0.0.1:{port}/api/v1" in text
    assert ("sandbox-demo-key" in text) is not custom_key
    assert "a-very-secret-key" not in text


def test_serve_refuses_an_unknown_fault_profile() -> None:
    from typer.testing import CliRunner

    from recon.cli.sandbox import app

    result = CliRunner().invoke(app, ["serve", "--faults", "sometimes", "--port", "1"])
    assert result.exit_code == 2
    assert "unknown fault profile" in result.output
    result = CliRunner().invoke(app, ["serve", "--prewarm", "later", "--port", "1"])
    assert result.exit_code == 2


def test_openapi_command_prints_the_document() -> None:
    from typer.testing import CliRunner

    from recon.cli.sandbox import app

    result = CliRunner().invoke(app, ["openapi"])
    assert result.exit_code == 0
    assert result.output.startswith("openapi: 3.0")


@pytest.mark.integration
def test_serve_command_applies_pacing_and_scripted_faults() -> None:
    """`recon sandbox serve` with the realism and fault options, over a socket."""
    port = _free_port()
    args = ["--port", str(port), "--payments", "2000", "--anchor", "2026-11-20T00:00:00Z"]
    args += ["--poison", "disputes:17", "--storm", "1", "--rate", "1000", "--prewarm", "off"]
    args += ["--latency-ms", "5", "--max-in-flight", "8", "--cache-records", "0"]
    env = {k: v for k, v in os.environ.items() if k != "RECON_SANDBOX_API_KEY"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "recon", "sandbox", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120  # a start-up bound, as above
        while True:
            try:
                httpx.get(f"{base}/_sandbox/health", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        with httpx.Client(base_url=base, headers=KEY, timeout=10) as client:
            storm = client.get("/api/v1/disputes")
            assert (storm.status_code, storm.headers["Retry-After"]) == (429, "1")
            bad = client.get("/api/v1/disputes", params={"max-records": 20})
            assert bad.status_code == 500
            assert bad.json()["requestId"] == bad.headers["X-Request-Id"]
            good = client.get("/api/v1/disputes", params={"max-records": 17})
            assert len(good.json()["data"]) == 17
            faults = client.get("/_sandbox/faults").json()
            assert faults["pacing"]["latencyMs"] == 5
            assert faults["pacing"]["maxInFlight"] == 8
            assert client.post("/_sandbox/faults", json={"poison": []}).status_code == 200
            assert client.get("/api/v1/disputes", params={"max-records": 20}).status_code == 200
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=15)
    banner = out.decode()
    assert "scripted faults: storm of 1, poison disputes:17" in banner
    assert "pacing: latency 5 ms (+0..0), rate 1000/s (burst the rate), at most 8 in flight" in (
        banner
    )


def test_state_says_warm_once_the_records_are_serialised() -> None:
    cold = create_app(SandboxConfig(payments=300, anchor=ANCHOR))
    assert cold.state.sandbox.state_json()["warm"] is False
    warm = create_app(SandboxConfig(payments=300, anchor=ANCHOR, prewarm="sync"))
    assert warm.state.sandbox.state_json()["warm"] is True
