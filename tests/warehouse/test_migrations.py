"""Numbered migrations: applied once, recorded, and upgrading an older warehouse in place."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from recon.errors import WarehouseError
from recon.warehouse.migrations import apply_migrations, migrations

FIXTURES = Path(__file__).parent / "fixtures"


def _columns(con: duckdb.DuckDBPyConnection) -> set[tuple[str, str, str]]:
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main'"
    ).fetchall()
    return {(str(t), str(c), str(d)) for t, c, d in rows}


def test_a_new_warehouse_takes_every_migration_once_and_records_it() -> None:
    con = duckdb.connect()
    applied = apply_migrations(con)
    assert applied == [m.name for m in migrations()]
    assert applied[0] == "0001_initial.sql"
    recorded = [
        r[0] for r in con.execute("SELECT name FROM schema_migrations ORDER BY version").fetchall()
    ]
    assert recorded == applied
    assert apply_migrations(con) == []  # up to date: nothing runs again


def test_a_warehouse_made_before_numbered_migrations_is_upgraded_in_place() -> None:
    old = duckdb.connect()
    # the schema file of 2026-11-23, as that version ran it on every open
    old.execute((FIXTURES / "schema_2026_11_23.sql").read_text(encoding="utf-8"))
    old.execute("ALTER TABLE check_runs DROP COLUMN coverage")  # as written before `coverage`
    old.execute(
        "INSERT INTO payments (id, amount_minor, currency, status, raw, content_hash, "
        "first_seen_run, last_seen_run) "
        "VALUES ('pay_1', 1250, 'eur', 'Confirmed', '{}', 'h', 'r1', 'r1')"
    )
    apply_migrations(old)
    fresh = duckdb.connect()
    apply_migrations(fresh)
    assert _columns(old) == _columns(fresh)
    assert old.execute("SELECT id, amount_minor, currency, status FROM payments").fetchall() == [
        ("pay_1", 1250, "EUR", "confirmed")
    ]
    assert old.execute("SELECT count(*) FROM schema_migrations").fetchone() == (len(migrations()),)


def test_a_failing_migration_is_rolled_back_and_named(tmp_path: Path) -> None:
    (tmp_path / "0001_make.sql").write_text("CREATE TABLE t (x INTEGER);\n")
    (tmp_path / "0002_broken.sql").write_text(
        "INSERT INTO t VALUES (1);\nINSERT INTO nowhere VALUES (1);\n"
    )
    con = duckdb.connect()
    with pytest.raises(WarehouseError, match=r"0002_broken\.sql"):
        apply_migrations(con, tmp_path)
    assert con.execute("SELECT count(*) FROM t").fetchone() == (0,)  # 0002 left nothing
    assert [r[0] for r in con.execute("SELECT version FROM schema_migrations").fetchall()] == [1]


def test_migration_files_are_numbered_once(tmp_path: Path) -> None:
    (tmp_path / "0003_a.sql").write_text("SELECT 1;\n")
    (tmp_path / "0003_b.sql").write_text("SELECT 1;\n")
    with pytest.raises(WarehouseError, match="share the number 3"):
        migrations(tmp_path)
    (tmp_path / "0003_b.sql").unlink()
    (tmp_path / "4_c.sql").write_text("SELECT 1;\n")
    with pytest.raises(WarehouseError, match="not named NNNN"):
        migrations(tmp_path)


def test_hashes_of_text_recon_did_not_write_canonically_are_made_canonical(
    tmp_path: Path,
) -> None:
    """Migration 0400: the load hashes md5(json(raw)) now; a stored record whose text is not
    canonical (and its latest version) takes that hash, a canonical one keeps its own, and
    an earlier version's hash is of its own text."""
    con = duckdb.connect()
    for migration in migrations():  # the warehouse as it was before 0400
        if migration.version < 400:
            (tmp_path / migration.path.name).write_bytes(migration.path.read_bytes())
    apply_migrations(con, tmp_path)
    spaced, canonical = '{"id": "pay_1", "n": 1.50}', '{"id":"pay_2","n":2}'
    older = '{"id":"pay_1"}'
    con.execute(
        "INSERT INTO payments (id, raw, content_hash, first_seen_run, last_seen_run) VALUES "
        "('pay_1', $1, md5($1), 'r1', 'r2'), ('pay_2', $2, md5($2), 'r1', 'r2')",
        [spaced, canonical],
    )
    con.execute(
        "INSERT INTO record_versions (entity, id, version, run_id, change, content_hash, raw) "
        "VALUES ('payments', 'pay_1', 1, 'r1', 'new', md5($3 || ' '), $3 || ' '), "
        "('payments', 'pay_1', 2, 'r2', 'changed', md5($1), NULL), "
        "('payments', 'pay_2', 1, 'r1', 'new', md5($2), NULL)",
        [spaced, canonical, older],
    )
    # 0400 alone (later migrations, e.g. 0410's bank tables, are not what this test is about)
    m0400 = next(m for m in migrations() if m.version == 400)
    (tmp_path / m0400.path.name).write_bytes(m0400.path.read_bytes())
    assert apply_migrations(con, tmp_path) == ["0400_canonical_content_hash.sql"]
    hashes = dict(con.execute("SELECT id, content_hash FROM payments").fetchall())
    versions = con.execute(
        "SELECT id, version, content_hash FROM record_versions ORDER BY id, version"
    ).fetchall()
    md5 = {
        text: con.execute("SELECT md5($1)", [text]).fetchone()[0]  # type: ignore[index]
        for text in ('{"id":"pay_1","n":1.5}', canonical, older)
    }
    assert hashes == {"pay_1": md5['{"id":"pay_1","n":1.5}'], "pay_2": md5[canonical]}
    assert versions == [
        ("pay_1", 1, md5[older]),
        ("pay_1", 2, md5['{"id":"pay_1","n":1.5}']),
        ("pay_2", 1, md5[canonical]),
    ]
    stage = (Path(__file__).parents[2] / "sql" / "load" / "stage.sql").read_text()
    assert "md5(json(raw))" in stage  # the hash the load makes, which this one must equal
