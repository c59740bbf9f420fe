"""Prefect's API server for one night, started without Prefect's command line (issue 23).

`python -m pipelines._api_server PORT` is what `prefect server start --no-services --no-ui`
runs — uvicorn serving `create_app(webserver_only=True)` — minus the import of Prefect's
command line (its whole command tree), minus block-type registration, which recon's flows
do not use (`PREFECT_SERVER_REGISTER_BLOCKS_ON_START=false`: on a new PREFECT_HOME it
writes every block type into the database), and minus the memo of that registration
(`PREFECT_SERVER_MEMOIZE_BLOCK_AUTO_REGISTRATION=false`: with it on, every start imports
every installed Prefect collection — prefect-dask, hence dask — to hash the block registry,
even when nothing is registered). `pipelines.server` starts it; `recon schedule` still uses
`prefect server start` (it needs the scheduler).

A new PREFECT_HOME costs Prefect's database migrations (~100 Alembic steps, ~4 CPU-s). The
first start that migrates a SQLite database keeps a copy of the empty migrated database,
per Prefect version, in recon's cache (`$XDG_CACHE_HOME/recon`, else `~/.cache/recon`); a
later start on a new PREFECT_HOME copies it instead of migrating, and a start whose
database is already at that copy's revision skips Prefect's migration check.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

_SQLITE = "sqlite+aiosqlite:///"


def main(argv: list[str]) -> int:
    port = int(argv[0])
    # Importing Prefect's server builds tens of thousands of objects (pydantic models,
    # SQLAlchemy tables, FastAPI routes): the cyclic collector ran over and over during it,
    # ~0.8 of ~3.4 CPU-s. Off while starting; what start-up built is then frozen out of it.
    gc.disable()
    os.environ.setdefault("PREFECT_SERVER_REGISTER_BLOCKS_ON_START", "false")
    os.environ.setdefault("PREFECT_SERVER_MEMOIZE_BLOCK_AUTO_REGISTRATION", "false")
    os.environ["PREFECT_SERVER_UI_ENABLED"] = "false"
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"

    import prefect
    from prefect.settings import (
        PREFECT_API_DATABASE_MIGRATE_ON_START,
        get_current_settings,
        temporary_settings,
    )

    database = sqlite_path(get_current_settings())
    template = template_path(prefect.__version__)
    new = database is not None and not database.exists()
    migrate = True
    if database is not None and template is not None:
        if new and template.exists():
            copy_atomically(template, database)
            new = False
        migrate = not same_revision(database, template)

    import uvicorn
    from prefect.server.api.server import create_app

    app = create_app(final=True, webserver_only=True)
    gc.freeze()
    gc.enable()
    if new and database is not None and template is not None:
        after_startup(app, lambda: save_template(database, template))
    # Prefect's settings were read at import: the migration switch goes through its context
    with temporary_settings(updates={PREFECT_API_DATABASE_MIGRATE_ON_START: migrate}):
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="error")
    return 0


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


def after_startup(app: Any, action: Callable[[], None]) -> None:
    """Run `action` once the app's startup (Prefect's migrations) is done, before serving."""
    startup = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(instance: Any) -> AsyncIterator[Any]:
        async with startup(instance) as state:
            action()
            yield state

    app.router.lifespan_context = lifespan


if __name__ == "__main__":  # pragma: no cover - a child process of pipelines.server
    raise SystemExit(main(sys.argv[1:]))
