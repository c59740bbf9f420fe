"""A small published warehouse for the workbench tests, its users, and `recon serve` started
as a real process on 127.0.0.1 (a free port)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from tests.ledger.support import warehouse

REPO = Path(__file__).resolve().parents[2]
RECON = Path(sys.executable).with_name("recon")
NOW = datetime.now(UTC)
R0 = f"{NOW - timedelta(days=10):%Y%m%dT%H%M%SZ}-000000"
R1 = f"{NOW:%Y%m%dT%H%M%SZ}-000001"
XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>'
KEY_SHORT = "ledger_amount_mismatch:ORD-1:provider_short"
KEY_XSS = f"ledger_order_missing_at_provider:{XSS}:missing"
KEY_BIG = "over_refunded:pay_3:over_refunded"
KEY_SMALL = "refunded_amount_mismatch:pay_4:short"
KEY_SUGGEST = "ledger_suggested_match:ORD-9:suggested"
PASSWORD = "correct horse battery"
CLIENTS: list[httpx.Client] = []  # closed when the server stops
USERS = {"alice": "preparer", "bob": "approver", "carol": "approver", "vic": "viewer"}


def build_warehouse(path: Path) -> None:
    """Two runs; the latest holds five findings (one carrying a script in its books
    reference), an order with a differing payment, and a suggestion."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = warehouse(path)
    con.execute(
        "INSERT INTO runs (run_id, started_at, status, loaded_at) VALUES "
        "(?, ?, 'complete', ?), (?, ?, 'complete', ?)",
        [R0, NOW - timedelta(days=10), NOW, R1, NOW, NOW],
    )
    rows = [
        (KEY_SHORT, "error", "new", "order", "ORD-1", "EUR", 150, "books EUR 10.00", R1),
        (KEY_XSS, "error", "open", "order", XSS, "EUR", 4200, XSS, R0),
        (KEY_BIG, "error", "open", "payment", "pay_3", "USD", 500000, "refunds over", R0),
        (KEY_SMALL, "warn", "open", "payment", "pay_4", "JPY", 700, "short", R0),
        (KEY_SUGGEST, "info", "new", "order", "ORD-9", "EUR", 2500, "one candidate", R1),
    ]
    for key, sev, state, entity, eid, cur, amount, detail, first in rows:
        check, issue = key.split(":")[0], key.split(":")[-1]
        con.execute(
            "INSERT INTO findings BY NAME SELECT ? AS run_id, ? AS check_name, ? AS severity, "
            "? AS finding_key, ? AS state, ? AS entity, ? AS entity_id, ? AS currency, "
            "? AS amount_minor, ? AS issue_type, ? AS detail, ? AS first_seen_run",
            [R1, check, sev, key, state, entity, eid, cur, amount, issue, detail, first],
        )
    for ref, amount in (("ORD-1", 1000), (XSS, 4200), ("ORD-9", 2500)):
        con.execute(
            "INSERT INTO ledger_orders (reference, amount_minor, currency, status, created_at, "
            "source, row_number, run_id) VALUES (?, ?, 'EUR', 'confirmed', ?, 'orders.csv', 2, ?)",
            [ref, amount, NOW - timedelta(days=2), R1],
        )
    for pid, amount, ref in (("pay_1", 850, "ORD-1"), ("pay_9", 2500, "SO-9")):
        con.execute(
            "INSERT INTO payments (id, amount_minor, currency, status, reference, created_at, "
            "raw, content_hash, first_seen_run, last_seen_run) "
            "VALUES (?, ?, 'EUR', 'confirmed', ?, ?, '{}', 'h', ?, ?)",
            [pid, amount, ref, NOW - timedelta(days=2), R1, R1],
        )
    con.execute(
        "INSERT INTO ledger_suggestions VALUES ('ORD-9', 'pay_9', 100, 'same amount', 1, 1, ?)",
        [R1],
    )
    con.close()


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env.update(extra)
    return env


def add_users(db: Path) -> None:
    for name, role in USERS.items():
        subprocess.run(
            [str(RECON), "users", "add", name, "--role", role, "--password-stdin", "--db", str(db)],
            input=PASSWORD + "\n",
            text=True,
            check=True,
            capture_output=True,
            env=clean_env(),
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    db: Path
    process: subprocess.Popen[str]


@contextmanager
def serve(db: Path, *args: str, scheme: str = "http", **env: str) -> Iterator[Server]:
    """`recon serve ARGS` on a free port of 127.0.0.1 until the block ends."""
    port = free_port()
    output = (db.parent / f"serve-{port}.log").open("w")
    process = subprocess.Popen(
        [
            str(RECON),
            "serve",
            "--port",
            str(port),
            "--db",
            str(db),
            "--reports",
            str(db.parent / "reports"),
            *args,
        ],
        env=clean_env(**env),
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"{scheme}://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"recon serve exited: {process.stderr.read() if process.stderr else ''}"
                )
            try:
                httpx.get(url + "/login", timeout=1, verify=False)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield Server(url, db, process)
    finally:
        for client in CLIENTS:
            client.close()
        CLIENTS.clear()
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        output.close()


def login(url: str, user: str, password: str = PASSWORD) -> tuple[httpx.Client, str]:
    """A client holding `user`'s session cookie, and their CSRF token."""
    client = httpx.Client(base_url=url, timeout=30)
    CLIENTS.append(client)
    response = client.post("/api/v1/session", json={"user": user, "password": password})
    assert response.status_code == 200, response.text
    return client, response.json()["csrf"]
