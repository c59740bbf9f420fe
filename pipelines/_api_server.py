"""Prefect's API server for one night, started with Prefect's own command line.

`python -m pipelines._api_server PORT` prepares Prefect's database and then becomes
`prefect server start --no-services --no-ui` (an `exec`: the same process, so the parent's
`PR_SET_PDEATHSIG` and its SIGTERM still reach the server). Nothing here imports
`prefect.server`: only `prefect.settings` (where the database is) and the public command
line. Block-type registration is off (`PREFECT_SERVER_REGISTER_BLOCKS_ON_START=false`:
recon's flows use no blocks, and on a new PREFECT_HOME it writes every block type), and so
is its memo (`PREFECT_SERVER_MEMOIZE_BLOCK_AUTO_REGISTRATION=false`: with it on, every start
imports every installed Prefect collection — prefect-dask, hence dask). `pipelines.server`
starts it; `recon schedule` runs `prefect server start` with its services.

A new PREFECT_HOME costs Prefect's database migrations (~100 Alembic steps, ~4 CPU-s). The
first start that finds a new SQLite database migrates it with `prefect server database
upgrade` and keeps a copy of the empty migrated database, per Prefect version, in recon's
cache (`$XDG_CACHE_HOME/recon`, else `~/.cache/recon`); a later start on a new PREFECT_HOME
copies it instead of migrating, and a start whose database is already at that copy's
revision skips Prefect's migration check (`PREFECT_SERVER_DATABASE_MIGRATE_ON_START=false`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

_SQLITE = "sqlite+aiosqlite:///"


def main(argv: list[str]) -> int:
    port = argv[0]
    os.environ.setdefault("PREFECT_SERVER_REGISTER_BLOCKS_ON_START", "false")
    os.environ.setdefault("PREFECT_SERVER_MEMOIZE_BLOCK_AUTO_REGISTRATION", "false")
    os.environ["PREFECT_SERVER_UI_ENABLED"] = "false"
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    prefect = prefect_command()

    import prefect as prefect_package
    from prefect.settings import get_current_settings

    database = sqlite_path(get_current_settings())
    template = template_path(prefect_package.__version__)
    if database is not None and template is not None:
        if not database.exists():
            if template.exists():
                copy_atomically(template, database)
            elif migrate(prefect):
                save_template(database, template)
        if same_revision(database, template):
            os.environ["PREFECT_SERVER_DATABASE_MIGRATE_ON_START"] = "false"
    args = [prefect, "server", "start", "--host", "127.0.0.1", "--port", port]
    args += ["--no-services", "--no-ui", "--analytics-off", "--log-level", "ERROR"]
    sys.stdout.flush()
    os.execvp(prefect, args)  # noqa: S606 - this venv's prefect, fixed arguments


def prefect_command() -> str:
    """Prefect's command line of this environment (beside this Python), else the one on PATH."""
    return shutil.which("prefect", path=os.path.dirname(sys.executable)) or (
        shutil.which("prefect") or "prefect"
    )


def migrate(prefect: str) -> bool:
    """Migrate a new database with Prefect's command line; True when it worked."""
    done = subprocess.run(  # noqa: S603 - fixed arguments
        [prefect, "server", "database", "upgrade", "--yes"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return done.returncode == 0


def sqlite_path(settings: Any) -> Path | None:
    """The file of Prefect's database when it is SQLite in a file, else None."""
    url = settings.server.database.connection_url
    value = url.get_secret_value() if url is not None else ""
    if not value.startswith(_SQLITE):
        return None
    path = value[len(_SQLITE) :].split("?", 1)[0]
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return Path(path)


def template_path(prefect_version: str) -> Path | None:
    """Where the empty migrated database of this Prefect version is kept (None: no cache)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            home = Path.home()
        except RuntimeError:  # no home directory known: no cache, Prefect migrates
            return None
        if not home.is_dir():
            return None
        base = str(home / ".cache")
    return Path(base) / "recon" / f"prefect-{prefect_version}.db"


def copy_atomically(source: Path, target: Path) -> None:
    """Copy a database into place; a WAL or shm file left beside the missing one would be
    read as the copy's own, so it goes first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for leftover in (f"{target.name}-wal", f"{target.name}-shm"):
        (target.parent / leftover).unlink(missing_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.copyfile(source, tmp)
    os.replace(tmp, target)


def _revision(path: Path) -> str | None:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT version_num FROM alembic_version").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    return str(row[0]) if row else None


def same_revision(database: Path, template: Path) -> bool:
    """Both databases at the same Alembic revision (the template is at this Prefect's head)."""
    if not template.exists() or not database.exists():
        return False
    mine = _revision(database)
    return mine is not None and mine == _revision(template)


def save_template(database: Path, template: Path) -> None:
    """Keep a copy of the just-migrated, still empty database (best effort)."""
    with contextlib.suppress(OSError, sqlite3.Error):
        template.parent.mkdir(parents=True, exist_ok=True)
        tmp = template.with_name(f".{template.name}.{os.getpid()}.tmp")
        source = sqlite3.connect(str(database))
        try:
            target = sqlite3.connect(str(tmp))
            try:
                source.backup(target)
                target.execute("PRAGMA journal_mode=DELETE")  # one file: copied as it is
            finally:
                target.close()
        finally:
            source.close()
        if _revision(tmp) is not None:
            os.replace(tmp, template)
        else:
            tmp.unlink(missing_ok=True)


if __name__ == "__main__":  # pragma: no cover - a child process of pipelines.server
    raise SystemExit(main(sys.argv[1:]))
