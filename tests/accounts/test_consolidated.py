"""The consolidated file over account warehouses that differ: views by name, NULL where an
account lacks a column, reference tables once, paths that survive moving the folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from recon.analyst.export import list_relations, open_read_only
from recon.errors import WarehouseError
from recon.warehouse.consolidated import attach_sql, build_consolidated


def _warehouse(path: Path, sql: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path))
    con.execute(sql)
    con.close()
    return path


def test_views_union_the_accounts_by_name(tmp_path: Path) -> None:
    root = tmp_path / "data"
    eu = _warehouse(
        root / "accounts" / "eu" / "recon.duckdb",
        "CREATE TABLE payments AS SELECT 'p1' AS id, 100::BIGINT AS amount_minor;"
        "CREATE TABLE only_eu AS SELECT 1 AS n;"
        "CREATE TABLE currencies AS SELECT 'EUR' AS code, 2 AS exponent, 'Euro' AS name;",
    )
    us = _warehouse(
        root / "accounts" / "us" / "recon.duckdb",
        "CREATE TABLE payments AS SELECT 'p9' AS id, 7::BIGINT AS amount_minor, 'x' AS extra;"
        "CREATE VIEW big AS SELECT * FROM payments WHERE amount_minor > 5;",
    )
    target = build_consolidated(root / "recon.duckdb", {"eu": eu, "us": us, "jp": root / "nope"})
    with open_read_only(target) as con:
        rows = con.execute("SELECT account, id, extra FROM payments ORDER BY account").fetchall()
        assert rows == [("eu", "p1", None), ("us", "p9", "x")]
        assert con.execute("SELECT account, n FROM only_eu").fetchall() == [("eu", 1)]
        assert con.execute("SELECT account, id FROM big").fetchall() == [("us", "p9")]
        # reference tables once, without an account column; money() works
        assert con.execute("SELECT count(*) FROM currencies WHERE code = 'EUR'").fetchone() == (1,)
        assert con.execute("SELECT money(1250, 'EUR')").fetchone() is not None
        assert con.execute("SELECT account FROM recon_accounts ORDER BY 1").fetchall() == [
            ("eu",),
            ("us",),
        ]
        assert {"payments", "only_eu", "big", "currencies"} <= set(list_relations(con))
        with pytest.raises(duckdb.Error):  # external access is off once attached
            con.execute("SELECT * FROM read_csv('/etc/passwd')").fetchall()
    assert any("acct_eu" in line for line in attach_sql(target))

    moved = tmp_path / "moved"
    shutil.copytree(root, moved)
    shutil.rmtree(root)
    with open_read_only(moved / "recon.duckdb") as con:  # stored relative: still found
        assert con.execute("SELECT count(*) FROM payments").fetchone() == (2,)
    (moved / "accounts" / "us" / "recon.duckdb").unlink()
    with (
        pytest.raises(WarehouseError, match="account us's warehouse"),
        open_read_only(moved / "recon.duckdb"),
    ):
        pass


def test_the_consolidated_file_keeps_the_data_dictionary(tmp_path: Path) -> None:
    """`recon describe` on the consolidated file (the default with accounts) says what the
    accounts' warehouses say, and what `account` is."""
    from typer.testing import CliRunner

    from recon.cli import app

    root = tmp_path / "data"
    eu = _warehouse(
        root / "accounts" / "eu" / "recon.duckdb",
        "CREATE TABLE payments AS SELECT 'p1' AS id, 100::BIGINT AS amount_minor;"
        "COMMENT ON TABLE payments IS 'Payments as the provider lists them now.';"
        "COMMENT ON COLUMN payments.amount_minor IS 'Amount in minor units, it''s exact.';",
    )
    target = build_consolidated(root / "recon.duckdb", {"eu": eu})
    result = CliRunner().invoke(app, ["describe", "payments", "--db", str(target)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "payments (view): Payments as the provider lists them now."
    assert "The account of [accounts] in recon.toml this row comes from" in result.stdout
    assert any("amount_minor" in x and "it's exact." in x for x in lines)
    result = CliRunner().invoke(app, ["describe", "currencies", "--db", str(target)])
    assert "(no comment)" not in result.stdout  # the reference tables' words too


def _published(path: Path, sql: str) -> Path:
    """An account's warehouse as a night publishes it (migrations, views, reader_objects)."""
    from recon.warehouse.working_copy import Warehouse

    wh = Warehouse(path)
    with wh.session("test", fresh=True, publish=True) as con:
        con.execute(sql)
    return path


def _made(target: Path) -> tuple[int, int]:
    stat = target.stat()
    return stat.st_ino, stat.st_mtime_ns


def test_the_consolidated_file_is_made_again_only_when_a_catalog_changed(tmp_path: Path) -> None:
    root = tmp_path / "data"
    eu = root / "accounts" / "eu" / "recon.duckdb"
    us = root / "accounts" / "us" / "recon.duckdb"
    insert = "INSERT INTO runs (run_id, started_at, status) VALUES ('{}', now(), 'complete')"
    _published(eu, insert.format("r1"))
    _published(us, insert.format("r2"))
    target = build_consolidated(root / "recon.duckdb", {"eu": eu, "us": us})
    first = _made(target)

    _published(eu, insert.format("r3"))  # a night: new rows, the same catalog
    assert _made(build_consolidated(target, {"eu": eu, "us": us})) == first
    with open_read_only(target) as con:  # the views read the accounts' files as they are now
        assert con.execute("SELECT account, run_id FROM runs ORDER BY ALL").fetchall() == [
            ("eu", "r1"),
            ("eu", "r3"),
            ("us", "r2"),
        ]

    _published(us, "ALTER TABLE runs ADD COLUMN note VARCHAR")  # a column: made again
    assert _made(build_consolidated(target, {"eu": eu, "us": us})) != first
    with open_read_only(target) as con:
        assert con.execute("SELECT count(note) FROM runs").fetchone() == (0,)
    second = _made(target)
    assert _made(build_consolidated(target, {"eu": eu, "us": us})) == second

    jp = _published(root / "accounts" / "jp" / "recon.duckdb", insert.format("r4"))
    assert _made(build_consolidated(target, {"eu": eu, "us": us, "jp": jp})) != second
    third = _made(target)
    assert _made(build_consolidated(target, {"eu": eu, "us": us})) != third  # one fewer


def test_accounts_without_a_fingerprint_make_the_file_every_time(tmp_path: Path) -> None:
    root = tmp_path / "data"
    eu = _warehouse(root / "accounts" / "eu" / "recon.duckdb", "CREATE TABLE t AS SELECT 1 AS n")
    target = build_consolidated(root / "recon.duckdb", {"eu": eu})
    first = _made(target)
    assert _made(build_consolidated(target, {"eu": eu})) != first
