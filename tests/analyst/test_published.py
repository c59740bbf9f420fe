"""The published warehouse opens in DuckDB 1.x (DBeaver's driver, older notebooks).

A throwaway virtual environment with the oldest DuckDB release that reads it (1.1.0, from PyPI
through uv) opens the file recon published and reads every table and view in it, the
analysts' views (and the `money()` macro they call) included. (DuckDB 1.0.0 opens the storage
format but cannot read the catalog entry of a table with a PRIMARY KEY that a newer DuckDB
serialised: "Failed to deserialize: expected end of object, but found field id: 103".)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from recon.warehouse.database import STORAGE_VERSION
from recon.warehouse.published import storage_version
from recon.warehouse.working_copy import Warehouse

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("sandbox_warehouse")]
OLD_DUCKDB = "1.1.0"

READ_ALL = textwrap.dedent(
    """
    import json, sys, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    names = con.execute(
        "SELECT table_name, table_type FROM information_schema.tables "
        "WHERE table_schema = 'main' ORDER BY 1"
    ).fetchall()
    counts = {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n, _ in names}
    money = con.execute(
        "SELECT CAST(money(1234, 'EUR') AS VARCHAR), CAST(money(1234, 'BHD') AS VARCHAR)"
    ).fetchone()
    print(json.dumps({"version": duckdb.__version__, "counts": counts,
                      "views": [n for n, t in names if t == "VIEW"], "money": list(money)}))
    """
)


@pytest.fixture(scope="session")
def old_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding duckdb==OLD_DUCKDB (uv's cache makes it quick after the first time)."""
    venv = tmp_path_factory.mktemp("duckdb1") / "venv"
    uv = shutil.which("uv")
    base = [uv] if uv else [sys.executable, "-m", "uv"]
    subprocess.run([*base, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [*base, "pip", "install", "-q", "-p", str(python), f"duckdb=={OLD_DUCKDB}"], check=True
    )
    return python


def _read_with(python: Path, db: Path) -> dict[str, object]:
    done = subprocess.run(
        [str(python), "-c", READ_ALL, str(db)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_duckdb_1_1_reads_every_table_and_view_of_a_real_warehouse(
    analyst_db: Path, old_python: Path
) -> None:
    result = _read_with(old_python, analyst_db)
    assert result["version"] == OLD_DUCKDB
    counts = result["counts"]
    assert isinstance(counts, dict)
    assert counts["payments"] == 600
    assert counts["payments_major"] == 600
    assert counts["findings_current"] > 0
    views = result["views"]
    assert isinstance(views, list)
    assert {"open_invoices", "findings_current", "night_over_night", "failed_calls"} <= set(views)
    assert result["money"] == ["12.3400", "1.2340"]


def _version(db: Path) -> str | None:
    probe = duckdb.connect(str(db), read_only=True)
    try:
        row = probe.execute("SELECT current_database()").fetchone()
        assert row is not None
        return storage_version(probe, str(row[0]))
    finally:
        probe.close()


def test_a_new_warehouse_is_written_compatible_from_its_first_night(
    tmp_path: Path, old_python: Path
) -> None:
    wh = Warehouse(tmp_path / "recon.duckdb")
    with wh.session("test", fresh=True, publish=False) as con:
        con.execute("CREATE TABLE t AS SELECT range AS i FROM range(1000)")
    # the working copy is created in the compatible format: publishing it converts nothing
    assert _version(wh.work_path) == f"{STORAGE_VERSION}+"
    wh.publish()
    assert _read_with(old_python, wh.path)["counts"] == _counts_now(wh.path)


def test_a_warehouse_first_written_in_the_newest_format_is_published_compatible(
    tmp_path: Path, old_python: Path
) -> None:
    wh = Warehouse(tmp_path / "recon.duckdb")
    old = duckdb.connect(str(wh.path))  # published before recon wrote DuckDB 1.x's format
    old.execute("CREATE TABLE t AS SELECT range AS i FROM range(1000)")
    old.close()
    # what DuckDB writes by default, and what a 1.x reader refuses
    assert _version(wh.path) != f"{STORAGE_VERSION}+"
    with wh.session("test", fresh=True, publish=True) as con:  # the copy keeps its format
        con.execute("INSERT INTO t SELECT range FROM range(5)")
    assert _version(wh.path) == f"{STORAGE_VERSION}+"  # converted once, at publish
    assert _read_with(old_python, wh.path)["counts"] == _counts_now(wh.path)
    # the next night starts from the compatible copy and stays compatible
    with wh.session("test", fresh=True, publish=True) as con:
        con.execute("INSERT INTO t SELECT range FROM range(5)")
    assert _read_with(old_python, wh.path)["counts"]["t"] == 1010  # type: ignore[index]


def _counts_now(db: Path) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()
        return {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for (n,) in names}  # type: ignore[index]
    finally:
        con.close()
