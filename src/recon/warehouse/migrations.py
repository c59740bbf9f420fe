"""Numbered migrations: `sql/migrations/NNNN_<name>.sql`, each applied once per warehouse.

A warehouse records what it has taken in `schema_migrations` (`sql/migrate.sql`). Opening
one applies the files it has not taken yet, in number order, each in its own transaction
with its record, so a kill between two files leaves a warehouse that resumes at the next
one. Opening an up-to-date warehouse reads one small table and changes nothing: no upgrade
statement scans a table twice.

Migration 0001 is the schema as it stood before migrations were numbered, written with
`IF NOT EXISTS` throughout, so a warehouse made then takes it harmlessly and is upgraded
in place by the files after it. A migration file is never edited once released: a change
is a new file with the next free number. After the files, the table of a list resource no
file made is made from its catalogue entry (recon.warehouse.catalogue_tables): adding a resource
needs
no migration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from recon.errors import WarehouseError
from recon.warehouse.catalogue_tables import create_resource_tables
from recon.warehouse.database import transaction
from recon.warehouse.sql import read_sql, sql_dir, sql_statements

__all__ = ["Migration", "apply_migrations", "migrations"]

_NAME = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")


@dataclass(frozen=True)
class Migration:
    """One file of `sql/migrations/`."""

    version: int
    path: Path

    @property
    def name(self) -> str:
        return self.path.name


def migrations(folder: Path | None = None) -> list[Migration]:
    """Every migration file, in number order; a misnamed file or a number used twice fails."""
    folder = folder or sql_dir() / "migrations"
    found: dict[int, Migration] = {}
    for path in sorted(folder.glob("*.sql")):
        match = _NAME.fullmatch(path.name)
        if not match:
            raise WarehouseError(f"migration file {path.name} is not named NNNN_<name>.sql")
        version = int(match.group(1))
        if version in found:
            raise WarehouseError(
                f"migrations {found[version].name} and {path.name} share the number {version}"
            )
        found[version] = Migration(version, path)
    return [found[v] for v in sorted(found)]


def apply_migrations(con: duckdb.DuckDBPyConnection, folder: Path | None = None) -> list[str]:
    """Bring the warehouse on `con` up to date; returns the names of the files applied."""
    for stmt in sql_statements(read_sql("migrate.sql")):
        con.execute(stmt)
    applied = {int(r[0]) for r in con.execute("SELECT version FROM schema_migrations").fetchall()}
    done: list[str] = []
    for migration in migrations(folder):
        if migration.version in applied:
            continue
        try:
            with transaction(con):
                for stmt in sql_statements(migration.path.read_text(encoding="utf-8")):
                    con.execute(stmt)
                con.execute(
                    "INSERT INTO schema_migrations BY NAME "
                    "SELECT ? AS version, ? AS name, ? AS applied_at",
                    [migration.version, migration.name, datetime.now(UTC)],
                )
        except duckdb.Error as exc:
            raise WarehouseError(f"cannot apply migration {migration.name}: {exc}") from None
        done.append(migration.name)
    with transaction(con):
        create_resource_tables(
            con
        )  # a resource no migration made (recon.warehouse.catalogue_tables)
    return done
