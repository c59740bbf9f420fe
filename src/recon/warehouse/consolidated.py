"""The consolidated warehouse: one DuckDB file over every account's published warehouse.

With `[accounts]` (recon.config.accounts) each account publishes its own warehouse; after the
night `build_consolidated` writes the top-level `RECON_DB` (default `data/recon.duckdb`)
as a small file that holds no records:

- `recon_accounts(account, path)`: each account and its published warehouse (relative to
  the consolidated file when below its folder, so the folder can move);
- every table and view of the accounts' warehouses as a view with an `account` column in
  front: the accounts' rows `UNION ALL BY NAME` (an account without the table is left
  out of that view; a column one account lacks is NULL for it);
- the reference tables and macros (`currencies`, `money()`, …) once, without `account`
  (they are the same for every account; joining them must not multiply rows).

The views read the accounts' files through `ATTACH … (READ_ONLY)`, which a DuckDB file
does not remember: `attach_accounts` attaches them on every connection (`recon query`,
`recon export` and `recon.analyst.export.open_read_only` do it; a DuckDB shell runs the
`ATTACH` lines `attach_sql` prints). Each account's `<table>` is also reachable as
`acct_<name>.<table>`. The file is built under a temporary name and renamed over the old
one, so a reader keeps the snapshot it opened; it is built again only when the accounts,
their catalogs (each account's `reader_objects` fingerprint) or the statements changed, which
its own `reader_objects` records.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import duckdb
import orjson

from recon.errors import WarehouseError
from recon.money.currency import create_currencies_table
from recon.warehouse.database import STORAGE_VERSION, transaction
from recon.warehouse.dictionary import apply_dictionary
from recon.warehouse.sql import read_sql, sql_dir, sql_statements

__all__ = [
    "REFERENCE_RELATIONS",
    "attach_accounts",
    "attach_sql",
    "build_consolidated",
    "catalog",
    "is_consolidated",
    "is_consolidated_file",
]

REFERENCE_RELATIONS = frozenset(
    {"currencies", "status_values", "status_transitions", "schema_migrations", "reader_objects"}
)
_ACCOUNTS_TABLE = "recon_accounts"


def catalog(account: str) -> str:
    """The name an account's warehouse is attached under."""
    return f"acct_{account}"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _stored_path(consolidated: Path, path: Path) -> str:
    here = consolidated.resolve().parent
    target = path.resolve()
    try:
        return str(target.relative_to(here))
    except ValueError:
        return str(target)


def _relations(con: duckdb.DuckDBPyConnection, cat: str) -> dict[str, str]:
    rows = con.execute(
        "SELECT table_name, table_type FROM information_schema.tables "
        "WHERE table_catalog = ? AND table_schema = 'main'",
        [cat],
    ).fetchall()
    return {str(name): str(kind) for name, kind in rows}


def _create_reference(con: duckdb.DuckDBPyConnection) -> None:
    """The reference tables and scalar macros (`sql/reference/`), once. A statement that
    reads the accounts' tables (a view or table macro over `invoices`, …) cannot be bound
    here and is left out: each account's own views are offered instead."""
    create_currencies_table(con)
    for path in sorted((sql_dir() / "reference").glob("*.sql")):
        for stmt in sql_statements(path.read_text(encoding="utf-8")):
            try:
                con.execute(stmt)
            except duckdb.CatalogException:
                continue


def _fingerprints(target: Path, present: Mapping[str, Path]) -> tuple[str | None, str | None]:
    """(what the consolidated file at `target` should be made of, what it was made of).

    The first: the accounts and where their files are, the fingerprint of each account's
    published objects and catalog (its `reader_objects`: its tables, views, columns and their
    words), the statements of the reference objects and of this module; None when an
    account's file has no fingerprint (published before it was kept) or cannot be read, and
    then the file is always made again. The accounts' records are not in it: the views read
    them through `ATTACH`, which every connection makes anew, so a night that changed only
    rows changes nothing here. The second: the fingerprint the file at `target` holds (None:
    no file, not a consolidated one, or none kept). Read through one connection that
    attaches every file read-only (a connection of its own for each costs twice the CPU)."""
    from recon.warehouse.published import statements_digest, stored_fingerprint

    con = duckdb.connect()
    try:
        h = hashlib.sha256(statements_digest())
        h.update(Path(__file__).read_bytes())
        for i, (name, path) in enumerate(present.items()):
            try:
                con.execute(f"ATTACH ? AS account_{i} (READ_ONLY)", [str(path.resolve())])
                stored = stored_fingerprint(con, f"account_{i}")
            except duckdb.Error:
                return None, None
            if stored is None:
                return None, None
            h.update(orjson.dumps([name, _stored_path(target, path), str(path.resolve()), stored]))
        if not target.is_file():
            return h.hexdigest(), None
        try:
            con.execute("ATTACH ? AS made (READ_ONLY)", [str(target)])
            kept = con.execute(
                "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'made' "
                "AND schema_name = 'main' AND table_name = ?",
                [_ACCOUNTS_TABLE],
            ).fetchall()
            made = stored_fingerprint(con, "made") if kept[0][0] else None
        except duckdb.Error:
            made = None
        return h.hexdigest(), made
    finally:
        con.close()


def build_consolidated(target: Path, accounts: Mapping[str, Path]) -> Path:
    """Write the consolidated file at `target` over the published warehouses in `accounts`
    (name -> file; accounts with no published warehouse yet are left out). A file already
    made of the same accounts, catalogs and statements (`_fingerprints`) is left as it is."""
    from recon.warehouse.published import keep_fingerprint

    present = {name: path for name, path in sorted(accounts.items()) if path.is_file()}
    fingerprint, made = _fingerprints(target, present)
    if fingerprint is not None and fingerprint == made:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.group-{os.getpid()}")
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
        leftover.unlink(missing_ok=True)
    try:
        con = duckdb.connect()
        try:
            con.execute(
                f"ATTACH ? AS consolidated (STORAGE_VERSION '{STORAGE_VERSION}')", [str(tmp)]
            )
            con.execute("USE consolidated")
            for stmt in sql_statements(read_sql("published/recon_accounts.sql")):
                con.execute(stmt)  # the table _ACCOUNTS_TABLE names, and its words
            for name, path in present.items():
                con.execute(
                    f"INSERT INTO {_ACCOUNTS_TABLE} BY NAME SELECT ? AS account, ? AS path",
                    [name, _stored_path(target, path)],
                )
                con.execute(f"ATTACH ? AS {_q(catalog(name))} (READ_ONLY)", [str(path.resolve())])
            keep_fingerprint(con, fingerprint)
            _create_reference(con)
            apply_dictionary(con)  # the reference tables' and macros' words
            found: dict[str, list[str]] = {}
            for name in present:
                for relation in _relations(con, catalog(name)):
                    if relation not in REFERENCE_RELATIONS:
                        found.setdefault(relation, []).append(name)
            words = _words(con, [catalog(n) for n in present])
            with transaction(con):  # the views and their words: one commit, not 1,000s
                for relation, names in sorted(found.items()):
                    union = " UNION ALL BY NAME ".join(
                        f"SELECT {_lit(n)} AS account, * FROM {_q(catalog(n))}.main.{_q(relation)}"  # noqa: S608 - names are quoted, accounts validated
                        for n in names
                    )
                    con.execute(f"CREATE VIEW {_q(relation)} AS {union}")
                    _copy_comments(con, relation, words.get(relation, (None, [])))
            con.execute("CHECKPOINT consolidated")
        finally:
            con.close()
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
        target.with_name(target.name + ".wal").unlink(missing_ok=True)
        os.replace(tmp, target)
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot write the consolidated warehouse {target}: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return target


Words = dict[str, tuple[str | None, list[tuple[str, str]]]]


def _words(con: duckdb.DuckDBPyConnection, sources: Sequence[str]) -> Words:
    """The data dictionary's words (recon.warehouse.dictionary) on every table and view of the
    attached warehouses `sources` (the first of them that has the relation): relation ->
    (its comment, [(column, comment)]). Read in two queries, not two per relation."""
    words: Words = {}
    order = {source: i for i, source in enumerate(sources)}
    owner: dict[str, str] = {}
    rows = con.execute(
        "SELECT database_name, table_name, comment FROM duckdb_tables() WHERE schema_name = "
        "'main' UNION ALL SELECT database_name, view_name, comment FROM duckdb_views() WHERE "
        "schema_name = 'main'"
    ).fetchall()
    for db, relation, comment in sorted(rows, key=lambda r: order.get(str(r[0]), len(order))):
        if str(db) in order and str(relation) not in owner:
            owner[str(relation)] = str(db)
            words[str(relation)] = (str(comment) if comment else None, [])
    for db, relation, column, comment in con.execute(
        "SELECT database_name, table_name, column_name, comment FROM duckdb_columns() WHERE "
        "schema_name = 'main' AND comment IS NOT NULL AND column_name <> 'account' "
        "ORDER BY database_name, table_name, column_index"
    ).fetchall():
        if owner.get(str(relation)) == str(db):
            words[str(relation)][1].append((str(column), str(comment)))
    return words


def _copy_comments(
    con: duckdb.DuckDBPyConnection, relation: str, words: tuple[str | None, list[tuple[str, str]]]
) -> None:
    """The data dictionary's words of `relation` in the attached warehouse it comes from
    (`_words`), put on its consolidated view, so `recon describe` reads the same here; its
    `account` column says what it is."""
    view = _q(relation)
    comment, columns = words
    if comment:
        con.execute(f"COMMENT ON VIEW {view} IS {_lit(comment)}")
    con.execute(
        f"COMMENT ON COLUMN {view}.account IS 'The account of [accounts] in recon.toml this row "
        "comes from (the consolidated warehouse: every account''s rows, UNION ALL BY NAME).'"
    )
    for column, text in columns:
        con.execute(f"COMMENT ON COLUMN {view}.{_q(column)} IS {_lit(text)}")


def is_consolidated(con: duckdb.DuckDBPyConnection) -> bool:
    """True when the file `con` opened is a consolidated warehouse."""
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_catalog = current_database() AND table_schema = 'main' AND table_name = ?",
        [_ACCOUNTS_TABLE],
    ).fetchone()
    return bool(row and row[0])


def is_consolidated_file(path: Path) -> bool:
    """True when the DuckDB file at `path` is a consolidated warehouse (False: no file)."""
    from recon.warehouse.database import open_readonly

    if not path.is_file():
        return False
    con = open_readonly(path)
    try:
        return is_consolidated(con)
    finally:
        con.close()


def _accounts(con: duckdb.DuckDBPyConnection, db_path: Path) -> list[tuple[str, Path]]:
    rows = con.execute(f"SELECT account, path FROM {_ACCOUNTS_TABLE} ORDER BY account").fetchall()  # noqa: S608
    here = db_path.resolve().parent
    return [(str(name), (here / str(path)).resolve()) for name, path in rows]


def attach_accounts(con: duckdb.DuckDBPyConnection, db_path: Path) -> list[str]:
    """Attach every account's warehouse read-only to `con` (opened on the consolidated file
    at `db_path`); returns the accounts. A file that is not consolidated: nothing done."""
    if not is_consolidated(con):
        return []
    names = []
    for name, path in _accounts(con, db_path):
        if not path.is_file():
            raise WarehouseError(f"account {name}'s warehouse {path} is missing")
        try:
            con.execute(f"ATTACH ? AS {_q(catalog(name))} (READ_ONLY)", [str(path)])
        except duckdb.Error as exc:
            raise WarehouseError(f"cannot attach account {name}'s warehouse {path}: {exc}") from exc
        names.append(name)
    return names


def attach_sql(db_path: Path) -> Sequence[str]:
    """The `ATTACH` statements a DuckDB shell on the consolidated file runs first."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        if not is_consolidated(con):
            return []
        return [
            f"ATTACH {_lit(str(path))} AS {_q(catalog(name))} (READ_ONLY);"
            for name, path in _accounts(con, db_path)
        ]
    finally:
        con.close()
