"""The readers' objects (reference tables, macros, views, the dictionary's words) carry the
fingerprint of what makes them and of the catalog they stand on (`reader_objects`,
recon.warehouse.published): the checks make them only when it changed; a publish makes them
every night and leaves the same catalog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from recon.checks.runner import ensure_reference_tables
from recon.warehouse import published
from recon.warehouse.migrations import apply_migrations
from recon.warehouse.working_copy import Warehouse


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the calls of `create_views` (what a publish runs to make the objects)."""
    calls: list[int] = []
    real = published.create_views

    def counted(con: duckdb.DuckDBPyConnection) -> None:
        calls.append(1)
        real(con)

    monkeypatch.setattr(published, "create_views", counted)
    return calls


def _night(wh: Warehouse, sql: str | None = None) -> None:
    with wh.session("test", fresh=True, publish=True) as con:
        if sql:
            con.execute(sql)


def _catalog(path: Path) -> dict[str, Any]:
    """What a reader sees of the objects: views and macros with their definitions, every
    comment, the reference tables' rows."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {
            "views": con.execute(
                "SELECT view_name, comment, sql FROM duckdb_views() WHERE NOT internal ORDER BY 1"
            ).fetchall(),
            "macros": con.execute(
                "SELECT function_name, comment, macro_definition, parameters FROM "
                "duckdb_functions() WHERE function_type LIKE '%macro' AND NOT internal "
                "ORDER BY ALL"
            ).fetchall(),
            "columns": con.execute(
                "SELECT table_name, column_name, data_type, comment FROM duckdb_columns() "
                "WHERE table_name <> 'reader_objects' ORDER BY ALL"
            ).fetchall(),
            "tables": con.execute(
                "SELECT table_name, comment FROM duckdb_tables() WHERE table_name <> "
                "'reader_objects' ORDER BY ALL"
            ).fetchall(),
            "rows": {
                t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
                for t in ("currencies", "status_values", "status_transitions", "money_paths")
            },
        }
    finally:
        con.close()


def test_every_publish_makes_the_objects_and_leaves_the_same_catalog(
    tmp_path: Path, made: list[int]
) -> None:
    wh = Warehouse(tmp_path / "recon.duckdb")
    _night(wh)
    first = _catalog(wh.path)
    assert first["views"]
    assert first["macros"]
    _night(wh)
    _night(wh)
    assert len(made) == 3  # a publish makes them every night (DuckDB 1.1 readers: see there)
    assert _catalog(wh.path) == first


def _current_after(wh: Warehouse, change: str | None) -> bool:
    con = wh.open_work(fresh=True)
    try:
        if change:
            con.execute(change)
        return published.reader_objects_current(con)
    finally:
        con.close()
        wh.discard()


@pytest.mark.parametrize(
    "change",
    [
        "ALTER TABLE payments ADD COLUMN note VARCHAR",  # a migration's new column
        "CREATE TABLE extra (i INTEGER)",  # a new table (its words)
        "DROP VIEW open_invoices",  # an object gone
        "COMMENT ON VIEW payments_major IS NULL",  # words lost (a view made again drops them)
        "CREATE OR REPLACE VIEW live_records AS SELECT 1 AS x",  # what the checks once did
    ],
)
def test_a_changed_catalog_is_not_current(tmp_path: Path, change: str) -> None:
    wh = Warehouse(tmp_path / "recon.duckdb")
    _night(wh)
    assert _current_after(wh, None)
    assert not _current_after(wh, change)


def test_changed_statements_are_not_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wh = Warehouse(tmp_path / "recon.duckdb")
    _night(wh)
    real = published.statements_digest
    monkeypatch.setattr(published, "statements_digest", lambda: real() + b"a changed view")
    assert not _current_after(wh, None)


def test_the_checks_make_the_objects_only_when_they_are_not_current(
    tmp_path: Path, made: list[int]
) -> None:
    fresh = duckdb.connect(str(tmp_path / "fresh.duckdb"))
    apply_migrations(fresh)
    ensure_reference_tables(fresh)  # a first night: nothing published yet
    assert len(made) == 1
    assert published.reader_objects_current(fresh)  # its publish will make nothing
    fresh.close()
    wh = Warehouse(tmp_path / "recon.duckdb")
    _night(wh)
    assert len(made) == 2
    con = wh.open_work(fresh=True)
    try:
        ensure_reference_tables(con)  # the working copy of a current publish
        assert len(made) == 2
        comments = con.execute(
            "SELECT count(*) FROM duckdb_columns() WHERE table_name = 'live_records' "
            "AND comment IS NOT NULL"
        ).fetchone()
        assert comments is not None
        assert comments[0] > 0  # the publish's words kept
    finally:
        con.close()
        wh.discard()


class _Spy:
    """A connection that remembers the COMMENT statements run on it."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.comments: list[str] = []

    def execute(self, query: str, *args: Any) -> duckdb.DuckDBPyConnection:
        if query.startswith("COMMENT"):
            self.comments.append(query)
        return self.con.execute(query, *args)


def test_the_dictionary_runs_only_the_words_an_object_lacks(tmp_path: Path) -> None:
    from recon.warehouse.dictionary import apply_dictionary

    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    apply_migrations(con)
    published.create_views(con)  # every word applied once
    words = "SELECT table_name, column_name, comment FROM duckdb_columns() ORDER BY ALL"
    before = con.execute(words).fetchall()
    spy = _Spy(con)
    apply_dictionary(spy)  # type: ignore[arg-type]
    assert spy.comments == []
    con.execute("COMMENT ON COLUMN payments.status IS 'something else'")
    con.execute("COMMENT ON VIEW open_invoices IS NULL")
    apply_dictionary(spy)  # type: ignore[arg-type]
    assert sorted(c.split(" IS ")[0] for c in spy.comments) == [
        "COMMENT ON COLUMN payments.status",
        "COMMENT ON VIEW open_invoices",
    ]
    assert con.execute(words).fetchall() == before
    con.close()
