"""`recon users` and `recon serve`'s refusals: one line, the right exit code, no secret."""

from __future__ import annotations

import shutil
import ssl
import stat
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.workbench.support import PASSWORD, RECON, add_users, build_warehouse, clean_env, serve


def _recon(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RECON), *args], input=stdin, capture_output=True, text=True, env=clean_env()
    )


def test_users_are_stored_as_argon2_hashes_only(tmp_path: Path) -> None:
    db = tmp_path / "recon.duckdb"
    added = _recon(
        "users",
        "add",
        "alice",
        "--role",
        "approver",
        "--password-stdin",
        "--db",
        str(db),
        stdin=PASSWORD + "\n",
    )
    assert added.returncode == 0, added.stderr
    store = tmp_path / "recon.users.json"
    text = store.read_text()
    assert PASSWORD not in text
    assert "$argon2id$" in text
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    listed = _recon("users", "list", "--db", str(db))
    assert "alice" in listed.stdout
    assert "approver" in listed.stdout
    assert "argon2" not in listed.stdout
    twice = _recon(
        "users",
        "add",
        "alice",
        "--role",
        "viewer",
        "--password-stdin",
        "--db",
        str(db),
        stdin=PASSWORD,
    )
    assert twice.returncode == 2
    assert len(twice.stderr.strip().splitlines()) == 1
    bad_role = _recon(
        "users", "add", "bob", "--role", "boss", "--password-stdin", "--db", str(db), stdin=PASSWORD
    )
    assert bad_role.returncode == 2
    short = _recon("users", "add", "bob", "--password-stdin", "--db", str(db), stdin="short\n")
    assert short.returncode == 2
    assert "short" not in short.stderr
    reset = _recon("users", "reset", "nobody", "--password-stdin", "--db", str(db), stdin=PASSWORD)
    assert reset.returncode == 2


def test_serve_refuses_plain_http_on_a_public_address(tmp_path: Path) -> None:
    answer = _recon("serve", "--host", "0.0.0.0", "--db", str(tmp_path / "recon.duckdb"))
    assert answer.returncode == 2
    assert "--insecure-http" in answer.stderr
    assert "Traceback" not in answer.stderr
    half = _recon("serve", "--tls-cert", str(tmp_path / "c.pem"), "--db", str(tmp_path / "x"))
    assert half.returncode == 2


@pytest.mark.integration
def test_serve_with_tls_sets_a_secure_cookie(tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is missing")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    db = tmp_path / "data" / "recon.duckdb"
    build_warehouse(db)
    add_users(db)
    trusted = ssl.create_default_context(cafile=str(cert))
    with (
        serve(db, "--tls-cert", str(cert), "--tls-key", str(key), scheme="https") as server,
        httpx.Client(base_url=server.url, verify=trusted) as client,
    ):
        answer = client.post("/api/v1/session", json={"user": "vic", "password": PASSWORD})
        assert answer.status_code == 200
        assert "secure" in answer.headers["set-cookie"].lower()
        assert client.get("/api/v1/findings").status_code == 200
