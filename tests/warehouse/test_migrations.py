"""Numbered migrations: applied once, recorded, and upgrading an older warehouse in place."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from recon.errors import WarehouseError
from recon.night.migrations import apply_migrations, migrations

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
