"""Secrets canary: `recon nightly -v` (DEBUG, Prefect at DEBUG too) with a canary API key and
bearer token, against a sandbox that accepts exactly those credentials, under `chaos` (so
retries, failed calls and error paths run too), with PREFECT_HOME in a temporary folder.

Pass: zero occurrences of either canary in stdout/stderr, in every file the run wrote (log
files, landing Parquet, reports, an export), in every table and column of the warehouse
(read as text), in every file under PREFECT_HOME (its SQLite database included, dumped as
SQL), and in the text, repr and pickle of the exceptions the client raises when a server
echoes the key back.
"""

from __future__ import annotations

import os
import pickle
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from starlette.responses import JSONResponse

from recon.errors import ReconError
from recon.sandbox.app import SandboxConfig
from recon.sandbox.server import serve_in_thread
from tests.api.sandbox_support import sandbox_client

from .conftest import scripted_server

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.xdist_group("prefect")]

CANARY_KEY = "canary-KEY-c0ffee-7d41e2b9-never-print"
CANARY_TOKEN = "canary-TOKEN-51bd0e44-9a7c-never-print"
CANARIES = (CANARY_KEY, CANARY_TOKEN)


def _leaks(text: str) -> list[str]:
    return [c for c in CANARIES if c in text]


def _texts_of(path: Path) -> list[str]:
    """The file as bytes-decoded text, plus its contents as a database would show them."""
    out = [path.read_bytes().decode("latin-1")]
    head = path.read_bytes()[:16]
    if head.startswith(b"SQLite format 3"):
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            out.append("\n".join(con.iterdump()))
        finally:
            con.close()
    elif path.suffix == ".parquet":
        con = duckdb.connect()
        out.append(str(con.execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchall()))
    elif path.suffix == ".duckdb":
        con = duckdb.connect(str(path), read_only=True)
        try:
            for (table,) in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
            ).fetchall():
                out.append(str(con.execute(f'SELECT * FROM "{table}"').fetchall()))
        finally:
            con.close()
    return out


def test_secrets_canary_never_leaks(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "prefect-home"
    work.mkdir()
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECON_", "PREFECT_"))}
    env.update(
        RECON_API_KEY=CANARY_KEY,
        RECON_BEARER_TOKEN=CANARY_TOKEN,
        RECON_BACKOFF_INITIAL_S="0.01",
        RECON_BACKOFF_MAX_S="0.05",
        PREFECT_HOME=str(home),
        PREFECT_LOGGING_LEVEL="DEBUG",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="90",
    )
    config = SandboxConfig(
        seed=23,
        payments=900,
        faults="chaos",
        retry_after_s=0,
        slow_s=0.01,
        api_key=CANARY_KEY,
        bearer_token=CANARY_TOKEN,
    )
    with serve_in_thread(config) as url:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "recon",
                "nightly",
                "-v",
                "--payment-methods",
                "--base-url",
                url,
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=work,
            timeout=300,
        )
        export = subprocess.run(
            [sys.executable, "-m", "recon", "export", "calls.csv", "--view", "failed_calls"],
            capture_output=True,
            text=True,
            env=env,
            cwd=work,
            timeout=120,
        )
    assert proc.returncode == 3, proc.stderr[-3000:]  # chaos: incomplete, reports written
    assert export.returncode == 0, export.stderr
    assert "DEBUG" in proc.stderr  # it really ran at DEBUG
    # Prefect's queued logs reached its database before recon stopped the server (else
    # the search below would miss them, and the run would wait a minute retrying).
    assert "Error logging to API" not in proc.stderr
    dbs = list(home.rglob("prefect.db"))
    assert dbs
    con = sqlite3.connect(f"file:{dbs[0]}?mode=ro", uri=True)
    try:
        logged = con.execute("SELECT count(*) FROM log").fetchone()[0]
    finally:
        con.close()
    assert logged > 0
    assert not _leaks(proc.stdout + proc.stderr + export.stdout + export.stderr)

    files = [p for root in (work, home) for p in root.rglob("*") if p.is_file()]
    kinds = {p.suffix for p in files}
    assert {".duckdb", ".parquet", ".html", ".json", ".csv"} <= kinds, kinds
    assert any(p.name.startswith("prefect.db") for p in files)
    leaked = [str(p) for p in files for text in _texts_of(p) if _leaks(text)]
    assert not leaked, leaked
    print(f"secrets canary: {len(files)} files searched, none holds the key or the token")


def test_secrets_canary_exceptions_never_hold_the_key() -> None:
    """A server that echoes the credentials back in its error messages and headers."""

    def echo(status: int) -> JSONResponse:
        msg = f"bad credentials x-api-key={CANARY_KEY} Authorization: Bearer {CANARY_TOKEN}"
        return JSONResponse(
            {
                "error": "unauthorized" if status == 401 else "boom",
                "message": msg,
                "requestId": "req_echo",
            },
            status,
            headers={"X-Request-Id": "req_echo", "X-Echo": CANARY_KEY},
        )

    for status in (401, 400, 503):
        with (
            scripted_server(lambda s=status: echo(s)) as (url, _),
            sandbox_client(
                url, records := [], api_key=CANARY_KEY, bearer_token=CANARY_TOKEN, max_attempts=2
            ) as client,
        ):
            try:
                client.list_disputes()
            except ReconError as exc:
                err = exc
            else:
                pytest.fail("no error")
            try:
                client.get_payment("pay_x")
            except ReconError as exc2:
                err2 = exc2
        for e in (err, err2):
            texts = [str(e), repr(e), pickle.dumps(e).decode("latin-1"), repr(vars(e))]
            assert not _leaks("\n".join(texts)), (status, texts)
        assert not _leaks(repr(records)), status


# -- issue 25, point 3: a secret setting's value is never echoed, whatever its shape ------


def test_a_libpq_keyword_string_is_never_echoed_and_the_alert_says_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from recon.cli import app
    from tests.night.conftest import webhook

    from .hostile import hostile_api

    canary = "CANARY-pw-5f3a"
    (tmp_path / "recon.toml").write_text(
        '[ledger.invoices]\nquery = "SELECT invoice_id, customer_id, amount_minor, currency '
        'FROM invoices"\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(
        "RECON_LEDGER_DATABASE_URL", f"host=db.internal password={canary} dbname=books"
    )
    with webhook() as hook, hostile_api() as api:
        monkeypatch.setenv("RECON_NOTIFY_URL", hook.url)
        result = CliRunner().invoke(app, ["nightly", "--base-url", api.url, "--db", "w.duckdb"])
        texts = [m["text"] for m in hook.received]
    assert result.exit_code == 2, result.output
    assert canary not in result.output
    assert "RECON_LEDGER_DATABASE_URL" in result.output or "[ledger.invoices] url" in result.output
    assert len(texts) == 1
    assert canary not in texts[0]
    assert "(exit 2)" in texts[0]


def test_scrub_hides_remembered_and_environment_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    from recon.errors import remember_secret, scrub

    monkeypatch.setenv("RECON_API_KEY", "key-0123456789")
    remember_secret("postgresql://u:pw@h/db")
    text = scrub("a key-0123456789 b postgresql://u:pw@h/db c password='x y' d pwd=abc")
    assert "key-0123456789" not in text
    assert "u:pw@h" not in text
    assert "x y" not in text
    assert "abc" not in text
