"""TLS: a server with a self-signed certificate on 127.0.0.1 is refused on the first
attempt (exactly one attempt in the call log, no retry, no HTTP request reaches the server),
and no setting or environment variable turns verification off.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from recon.api import CallRecord
from recon.config.settings import Settings
from recon.errors import TransportError
from recon.night import nightly as steps
from recon.sandbox.app import SandboxConfig, create_app
from tests.api.sandbox_support import sandbox_client

from .conftest import KEY, TOKEN, overrides_for, read_only

pytestmark = pytest.mark.integration

# Knobs other tools use to switch verification off; none of them may work here.
INSECURE_ENV = {
    "RECON_VERIFY": "false",
    "RECON_TLS_VERIFY": "false",
    "RECON_SSL_VERIFY": "0",
    "RECON_VERIFY_SSL": "false",
    "RECON_INSECURE": "true",
    "RECON_ALLOW_INSECURE_HTTP": "true",
    "PYTHONHTTPSVERIFY": "0",
    "CURL_CA_BUNDLE": "",
    "REQUESTS_CA_BUNDLE": "",
}


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@contextmanager
def tls_sandbox(folder: Path) -> Iterator[tuple[str, object]]:
    cert, key = _self_signed(folder)
    app = create_app(SandboxConfig(seed=2, payments=300, api_key=KEY, bearer_token=TOKEN))
    cfg = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
        log_level="critical",
        lifespan="off",
        access_log=False,
    )
    server = uvicorn.Server(cfg)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert time.monotonic() < deadline, "TLS sandbox did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"https://127.0.0.1:{port}", app.state.sandbox
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_tls_self_signed_is_refused_on_the_first_attempt(tmp_path: Path) -> None:
    records: list[CallRecord] = []
    with (
        tls_sandbox(tmp_path) as (url, state),
        sandbox_client(url, records, api_key=KEY, bearer_token=TOKEN) as client,
    ):
        with pytest.raises(TransportError) as info:
            list(client.scan("payments"))
        served = state.requests  # type: ignore[attr-defined]
    assert info.value.kind == "tls"
    assert len(records) == 1
    assert (records[0].error, records[0].attempt, records[0].outcome) == ("tls", 1, "failed")
    assert served == 0


def test_tls_run_aborts_and_no_setting_turns_verification_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fields = {name.lower() for name in Settings.model_fields}
    assert not {f for f in fields if "verify" in f or "ssl" in f or "tls" in f}
    for name, value in INSECURE_ENV.items():
        monkeypatch.setenv(name, value)
    with tls_sandbox(tmp_path) as (url, state):
        summary = steps.run_local(overrides_for(tmp_path, url))
        served = state.requests  # type: ignore[attr-defined]
    assert (summary.status, summary.exit_code) == ("failed", steps.EXIT_ABORTED)
    assert summary.reason is not None
    assert "tls" in summary.reason.lower() or "certificate" in summary.reason.lower()
    assert served == 0
    con = read_only(summary.db_path)
    calls = con.execute(
        "SELECT resource, attempt, error, outcome FROM api_calls WHERE run_id = ?",
        [summary.run_id],
    ).fetchall()
    assert calls
    assert all(c[1:] == (1, "tls", "failed") for c in calls), calls
    assert len({c[0] for c in calls}) == len(calls)  # one attempt per resource at most
