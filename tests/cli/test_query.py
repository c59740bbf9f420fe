"""`recon query` (issue 15): DuckDB's own message, SQL from a file or stdin, table/csv/json,
an unrelated bad setting does not break it, a missing warehouse is named in full."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from recon.cli import app


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "data" / "recon.duckdb"
    path.parent.mkdir()
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE payments (id VARCHAR, amount DECIMAL(18, 2), ref VARCHAR)")
    con.execute("INSERT INTO payments VALUES ('pay_1', 12.34, '=1+1'), ('pay_2', -0.10, 'ok')")
    con.close()
    return path


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["query", *args], input=stdin)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_a_sql_error_keeps_duckdbs_hint_and_is_not_a_bad_setting(db: Path) -> None:
    code, _, err = _run("SELECT * FROM paymnts")
    assert code == 2
    assert "bad setting" not in err
    assert "query failed" in err
    assert 'Did you mean "payments"' in err


def test_sql_from_a_file_and_from_stdin(db: Path, tmp_path: Path) -> None:
    (tmp_path / "q.sql").write_text("SELECT count(*) AS n FROM payments")
    code, out, _ = _run("--file", "q.sql", "--format", "csv")
    assert (code, out) == (0, '"n"\n2\n')
    code, out, _ = _run("-", "--format", "csv", stdin="SELECT id FROM payments ORDER BY id\n")
    assert (code, out) == (0, '"id"\n"pay_1"\n"pay_2"\n')


def test_formats(db: Path) -> None:
    sql = "SELECT id, amount, ref FROM payments ORDER BY id"
    code, out, _ = _run(sql, "--format", "json")
    assert code == 0
    assert json.loads(out) == [
        {"id": "pay_1", "amount": "12.34", "ref": "=1+1"},
        {"id": "pay_2", "amount": "-0.10", "ref": "ok"},
    ]
    code, out, _ = _run(sql, "--format", "csv")
    assert out.splitlines() == [
        '"id","amount","ref"',
        '"pay_1",12.34,"\'=1+1"',
        '"pay_2",-0.10,"ok"',
    ]
    code, out, _ = _run(sql)
    assert code == 0
    assert "pay_1" in out
    assert "12.34" in out


def test_an_unrelated_api_setting_does_not_break_a_query(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_PAGE_SIZE", "500")
    code, out, err = _run("SELECT count(*) AS n FROM payments", "--format", "csv")
    assert (code, out) == (0, '"n"\n2\n'), err


def test_the_missing_default_warehouse_is_named_in_full(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = _run("SELECT 1")
    assert code == 1
    assert str(elsewhere / "data" / "recon.duckdb") in err
    monkeypatch.setenv("RECON_DB", str(db))
    code, _, err = _run("SELECT 1")
    assert code == 0, err


def test_the_table_shows_every_row_up_to_max_rows(db: Path) -> None:
    code, out, _ = _run("SELECT 'row_' || range AS r FROM range(40)")
    assert code == 0
    assert [f"row_{i}" for i in range(40)] == [w for w in out.split() if w.startswith("row_")]
    code, out, _ = _run("SELECT 'row_' || range AS r FROM range(40)", "--max-rows", "25")
    assert [w for w in out.split() if w.startswith("row_")] == [f"row_{i}" for i in range(25)]
    assert "(first 25 rows; --max-rows to see more)" in out


WIDE = (
    "SELECT 'run_20261121' AS run_id, 'incomplete' AS status, "
    "'payments: 1 page failed for good' AS reason, 'GET' AS method, "
    "'/api/v1/payments' AS path, 503 AS http_status, ['req_a1', 'req_a2'] AS request_ids"
)


def test_a_result_wider_than_the_terminal_hides_no_column(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = _run(WIDE)
    assert code == 0
    assert "…" not in out
    for text in ("payments: 1 page failed for good", "/api/v1/payments", "[req_a1, req_a2]"):
        assert text in out
    assert "one line per field; --format csv or json gives every column" in out
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = _run(WIDE)
    assert "[req_a1, req_a2]" in out
    assert "one line per field" not in out  # it fits: a table


def test_amounts_print_with_their_currencys_digits(db: Path) -> None:
    sql = (
        "SELECT * FROM (VALUES ('JPY', CAST(725161 AS DECIMAL(38, 4))), "
        "('EUR', CAST(12.3 AS DECIMAL(38, 4))), ('BHD', CAST(1.234 AS DECIMAL(38, 4))), "
        "('XYZ', CAST(5 AS DECIMAL(38, 4)))) AS t(currency, amount)"
    )
    code, out, _ = _run(sql)
    assert code == 0
    assert "725161 " in out
    assert "725161.0000" not in out
    assert "12.30 " in out
    assert "1.234 " in out
    assert "5.0000" in out  # not ISO 4217: shown as stored


class _Writes:
    """A binary stream that keeps each write apart."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass


def test_json_is_streamed_a_batch_at_a_time(db: Path) -> None:
    from recon.analyst.query import run_query

    out = _Writes()
    sql = "SELECT range AS n, 'x' || range AS label FROM range(150000) ORDER BY n"
    rows = run_query(db, sql, fmt="json", out=out)  # type: ignore[arg-type]
    assert rows == 150_000
    # written as it is read (issue 38): several batches, not one 150,000-row frame
    assert sum(1 for part in out.parts if len(part) > 1) >= 3
    parsed = json.loads(b"".join(out.parts))
    assert len(parsed) == 150_000
    assert parsed[0] == {"n": 0, "label": "x0"}
    assert parsed[-1] == {"n": 149_999, "label": "x149999"}


def test_json_of_no_rows_is_an_empty_array(db: Path) -> None:
    code, out, _ = _run("SELECT id FROM payments WHERE false", "--format", "json")
    assert (code, json.loads(out)) == (0, [])


def test_a_query_honours_the_memory_setting(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_DUCKDB_MEMORY_LIMIT", "300MiB")
    code, out, _ = _run("SELECT current_setting('memory_limit') AS m", "--format", "csv")
    assert (code, out) == (0, '"m"\n"300.0 MiB"\n')
