"""A query naming a column twice (issue 38, point 4): `recon query` and `recon export` write
it as `id`, `id_2` in CSV and JSON, never a traceback."""

from __future__ import annotations

import io
import json
from pathlib import Path

import duckdb
import pytest

from recon.analyst.export import export
from recon.analyst.query import run_query
from recon.output.spreadsheet import unique_names

SQL = "SELECT id, id, 'a' AS x, 'b' AS x FROM t ORDER BY 1"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('p1'), ('p2')) AS v(id)")
    con.close()
    return path


def test_unique_names_never_takes_a_name_the_query_has() -> None:
    assert unique_names(["id", "id", "x", "id_2", "x"]) == ["id", "id_3", "x", "id_2", "x_2"]
    assert unique_names(["a", "b"]) == ["a", "b"]


def test_query_as_csv_renames_the_second_column(db: Path) -> None:
    out = io.BytesIO()
    assert run_query(db, SQL, fmt="csv", out=out) == 2
    assert out.getvalue().decode().splitlines()[:2] == [
        '"id","id_2","x","x_2"',
        '"p1","p1","a","b"',
    ]


def test_query_as_json_renames_the_second_column(db: Path) -> None:
    out = io.BytesIO()
    assert run_query(db, SQL, fmt="json", out=out) == 2
    assert json.loads(out.getvalue())[0] == {"id": "p1", "id_2": "p1", "x": "a", "x_2": "b"}


@pytest.mark.parametrize("name", ["q.csv", "q.parquet", "q.xlsx"])
def test_export_of_a_query_renames_the_second_column(db: Path, tmp_path: Path, name: str) -> None:
    result = export(db, query=SQL, out=tmp_path / name)
    assert result.rows == 2
    if not name.endswith(".xlsx"):
        con = duckdb.connect()
        described = con.execute(f"DESCRIBE SELECT * FROM '{result.path}'").fetchall()
        assert [d[0] for d in described] == ["id", "id_2", "x", "x_2"]
