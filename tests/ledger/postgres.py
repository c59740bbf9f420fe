"""A throwaway PostgreSQL server on 127.0.0.1 for the books' SQL-query source.

Debian's `postgresql` is installed by `make test-deps` (which `make test` runs first), never
by a test; without it the test is skipped, loudly. The cluster is initialised in a fresh
folder owned by the `postgres` user (PostgreSQL refuses to run as root), with password
authentication, and stopped at the end.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

PASSWORD = "s3cret-ledger-pw"  # a canary: it must never show up anywhere recon writes


def _bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def install() -> str | None:
    """Why PostgreSQL cannot be run here, or None (`make test-deps` installs it)."""
    if _bin("initdb") and _bin("pg_ctl"):
        return None
    return "PostgreSQL is missing: run `make test-deps` (apt-get install postgresql, as root)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_postgres(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", "postgres", "--", *cmd]


@contextlib.contextmanager
def server() -> Iterator[str]:
    """A PostgreSQL server on 127.0.0.1; yields its URL (with the canary password)."""
    # Not under pytest's tmp_path: its parents are private to root, and the server runs
    # as `postgres`. A fresh folder of its own, removed at the end.
    folder = Path(tempfile.mkdtemp(prefix="recon-pg-"))
    data, pwfile, log = folder / "data", folder / "pw", folder / "server.log"
    pwfile.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        shutil.chown(pwfile, "postgres", "postgres")
    port = _free_port()
    initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
    assert initdb
    assert pg_ctl
    subprocess.run(
        _as_postgres(
            [
                initdb,
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=scram-sha-256",
                f"--pwfile={pwfile}",
                "--encoding=UTF8",
                "--no-instructions",
            ]
        ),
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    options = f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off"
    subprocess.run(
        _as_postgres([pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w", "start"]),
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    try:
        yield f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"]),
            capture_output=True,
            text=True,
            timeout=120,
        )
        shutil.rmtree(folder, ignore_errors=True)
