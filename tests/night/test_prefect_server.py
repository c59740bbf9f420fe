"""recon's own Prefect server start (issue 23): the health probe, the migrated-database
template for a new PREFECT_HOME, and a server that is started without being waited for,
with Prefect's public command line (issue 36)."""

from __future__ import annotations

import ast
import http.server
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import SecretStr

from pipelines import _api_server as api_server
from pipelines import server


def _database(path: Path, revision: str | None, *, rows: int = 0) -> Path:
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")  # as Prefect opens it
    con.execute("CREATE TABLE flow_run (id INTEGER)")
    con.executemany("INSERT INTO flow_run VALUES (?)", [(i,) for i in range(rows)])
    if revision is not None:
        con.execute("CREATE TABLE alembic_version (version_num TEXT)")
        con.execute("INSERT INTO alembic_version VALUES (?)", [revision])
    con.commit()
    con.close()
    return path


def _settings(url: str | None) -> Any:
    value = SecretStr(url) if url is not None else None
    return SimpleNamespace(server=SimpleNamespace(database=SimpleNamespace(connection_url=value)))


def test_only_a_sqlite_file_has_a_path() -> None:
    assert api_server.sqlite_path(_settings("sqlite+aiosqlite:////h/prefect.db")) == Path(
        "/h/prefect.db"
    )
    assert api_server.sqlite_path(_settings("postgresql+asyncpg://u:p@db/prefect")) is None
    assert api_server.sqlite_path(_settings("sqlite+aiosqlite:///:memory:")) is None
    assert api_server.sqlite_path(_settings(None)) is None


def test_the_template_is_kept_per_prefect_version_in_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert api_server.template_path("3.8.8") == tmp_path / "cache" / "recon" / "prefect-3.8.8.db"
    assert api_server.template_path("3.9.1") != api_server.template_path("3.8.8")


def test_a_migrated_database_becomes_a_template_a_new_home_copies(tmp_path: Path) -> None:
    migrated = _database(tmp_path / "prefect.db", "a3b9c7d2e5f1")
    template = tmp_path / "cache" / "recon" / "prefect-3.8.8.db"

    api_server.save_template(migrated, template)

    assert template.exists()
    assert not list(template.parent.glob(".*"))  # no temporary file, WAL or shm beside it
    con = sqlite3.connect(template)
    assert con.execute("PRAGMA journal_mode").fetchone() == ("delete",)  # one file to copy
    con.close()
    home_db = tmp_path / "new-home" / "prefect.db"
    home_db.parent.mkdir()
    stale = home_db.with_name("prefect.db-wal")  # left by a database deleted by hand
    stale.write_bytes(b"not this database's log")
    api_server.copy_atomically(template, home_db)
    assert api_server.same_revision(home_db, template)
    assert not stale.exists()


def test_migrations_are_skipped_only_at_the_templates_revision(tmp_path: Path) -> None:
    template = _database(tmp_path / "template.db", "head-rev")
    assert api_server.same_revision(_database(tmp_path / "a.db", "head-rev"), template)
    assert not api_server.same_revision(_database(tmp_path / "b.db", "older-rev"), template)
    assert not api_server.same_revision(_database(tmp_path / "c.db", None), template)
    assert not api_server.same_revision(tmp_path / "missing.db", template)
    assert not api_server.same_revision(template, tmp_path / "no-template.db")


def test_a_database_without_a_revision_is_not_kept_as_a_template(tmp_path: Path) -> None:
    template = tmp_path / "cache" / "prefect-3.8.8.db"
    api_server.save_template(_database(tmp_path / "half.db", None), template)
    assert not template.exists()
    assert not list(template.parent.glob("*"))


def test_no_module_of_pipelines_imports_prefects_server_internals() -> None:
    """Prefect's public command line starts the server (issue 36): `prefect.server` is no
    API to build on, and it moved under recon before."""
    pipelines = Path(api_server.__file__).parent
    for path in sorted(pipelines.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith("prefect.server"), f"{path.name} imports {name}"


class _Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/api/health" else 503)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def health_server() -> Iterator[int]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_health_probe_wants_a_200_from_health(health_server: int) -> None:
    assert server._healthy(f"http://127.0.0.1:{health_server}/api")
    assert not server._healthy(f"http://127.0.0.1:{health_server}/elsewhere")
    assert not server._healthy(f"http://127.0.0.1:{server._free_port()}/api")  # nobody there


def test_a_configured_server_is_used_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://prefect.internal:4200/api")
    said: list[str] = []
    with server.starting_prefect_server(said.append) as started:
        assert started.api_url == "http://prefect.internal:4200/api"
        assert not started.own  # recon's flow settings (no heartbeats) are for its own server
    assert said == ["Prefect server: http://prefect.internal:4200/api (PREFECT_API_URL)"]
