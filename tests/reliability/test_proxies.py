"""Proxies from the environment (issue 37 point 4): 127.0.0.1 and localhost never go through
one — a dead `HTTP_PROXY` breaks neither the sandbox nor Prefect's local traffic — and a
proxy URL that cannot be used is one line naming its variable, exit 2, before anything
starts. recon's own client is tested in tests/api/test_transport.py.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from recon.api.transport import keep_loopback_direct

from .conftest import KEY, TOKEN

pytestmark = pytest.mark.integration

PROXY_VARIABLES = tuple(
    name
    for scheme in ("http", "https", "all", "no")
    for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY")
)


def _env(tmp_path: Path, **proxies: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RECON_", "PREFECT_")) and k not in PROXY_VARIABLES
    }
    env.update(
        RECON_API_KEY=KEY,
        RECON_BEARER_TOKEN=TOKEN,
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="90",
        **proxies,
    )
    return env


def _recon(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recon", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HTTP_PROXY", "http://user:s3cret@proxy.example.test:notaport"),
        ("https_proxy", "http://[::1"),
        ("ALL_PROXY", "socks4://user:s3cret@proxy.example.test:1080"),
    ],
)
def test_a_malformed_proxy_url_is_one_line_exit_2_naming_it(
    tmp_path: Path, name: str, value: str
) -> None:
    done = _recon(tmp_path, _env(tmp_path, **{name: value}), "nightly", "--sandbox")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    assert lines[0].startswith(f"recon: bad setting {name}: ")
    assert "s3cret" not in done.stderr + done.stdout


def test_a_dead_proxy_breaks_neither_the_sandbox_nor_prefect(tmp_path: Path) -> None:
    """Every proxy variable names a port nobody listens on: the night against the bundled
    sandbox (its health check, recon's client, Prefect's temporary server) is complete.
    Every request of a night goes the same way whatever its size: a small sandbox."""
    listener = socket.create_server(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()
    env = _env(tmp_path, HTTP_PROXY=dead, HTTPS_PROXY=dead, ALL_PROXY=dead, NO_PROXY="")
    done = _recon(tmp_path, env, "nightly", "--sandbox", "--sandbox-payments", "1000")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr


def test_loopback_is_added_to_no_proxy_only_when_a_proxy_is_named() -> None:
    env = {"HTTPS_PROXY": "http://proxy.example.test:3128", "NO_PROXY": "internal.test"}
    keep_loopback_direct(env)
    assert env["NO_PROXY"] == env["no_proxy"] == "internal.test,127.0.0.1,localhost,::1"
    untouched: dict[str, str] = {}
    keep_loopback_direct(untouched)
    assert untouched == {}
    star = {"ALL_PROXY": "socks5://127.0.0.1:1080", "no_proxy": "*"}
    keep_loopback_direct(star)
    assert star == {"ALL_PROXY": "socks5://127.0.0.1:1080", "no_proxy": "*"}
