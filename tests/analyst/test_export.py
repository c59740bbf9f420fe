from __future__ import annotations

import csv
import os
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from recon.analyst.export import ExportResult, export
from recon.errors import ConfigError, WarehouseError
from tests.report.synthetic_warehouse import LAST, build


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("wh") / "recon.duckdb"
    con = build(path)
    rows = [
        ("pay_1", 1250, "EUR", "confirmed", '=HYPERLINK("http://evil","x")'),
        ("pay_2", -1250, "EUR", "refunded", "+SUM(A1:A9)"),
        ("pay_3", 900, "JPY", "pending", "-2+3"),
        ("pay_4", 12345, "BHD", "confirmed", "@cmd"),
        ("pay_5", 100, "USD", "confirmed", "\tTAB"),
        ("pay_6", 100, "USD", "confirmed", "\rCR"),
        ("pay_7", 100, "USD", "confirmed", "\nLF"),
        ("pay_8", 100, "USD", "confirmed", "plain ref, with comma"),
        ("pay_9", 100, "USD", "confirmed", None),
    ]
    for pid, amount, cur, status, ref in rows:
        con.execute(
            "INSERT INTO payments VALUES (?, ?, ?, ?, ?, now(), '{}', 'h', 'r1', 'r1', NULL)",
            [pid, amount, cur, status, ref],
        )
    con.execute("CREATE TABLE ledger (label VARCHAR, amount DECIMAL(12, 2), ratio DOUBLE)")
    con.execute("INSERT INTO ledger VALUES ('=refund', -12.50, -0.5), ('ok', 3.00, 1.25)")
    con.close()
    return path


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8-sig") as fh:
        return list(csv.DictReader(fh))


def test_table_to_csv_is_formula_safe(db: Path, tmp_path: Path) -> None:
    result = export(db, table="payments", out=Path("payments.csv"), base_dir=tmp_path)
    assert result == ExportResult(
        path=(tmp_path / "payments.csv").resolve(), rows=9, left_out=("raw",)
    )
    rows = {r["id"]: r for r in _read_csv(result.path)}
    assert rows["pay_1"]["reference"] == '\'=HYPERLINK("http://evil","x")'
    assert rows["pay_2"]["reference"] == "'+SUM(A1:A9)"
    assert rows["pay_3"]["reference"] == "'-2+3"
    assert rows["pay_4"]["reference"] == "'@cmd"
    assert rows["pay_5"]["reference"] == "'\tTAB"
    assert rows["pay_6"]["reference"] == "'\rCR"
    assert rows["pay_7"]["reference"] == "'\nLF"
    assert rows["pay_8"]["reference"] == "plain ref, with comma"
    assert rows["pay_9"]["reference"] == ""
    assert rows["pay_2"]["amount_minor"] == "-1250"  # numbers untouched
    text = result.path.read_text(encoding="utf-8-sig")
    assert ",-1250," in text  # not quoted: a spreadsheet sees a number


def test_numbers_stay_numbers(db: Path, tmp_path: Path) -> None:
    result = export(db, table="ledger", out=tmp_path / "ledger.csv", base_dir=tmp_path)
    lines = result.path.read_text(encoding="utf-8-sig").splitlines()
    assert lines[1] == '"\'=refund",-12.50,-0.5'
    assert lines[2] == '"ok",3.00,1.25'


def test_view_to_parquet(db: Path, tmp_path: Path) -> None:
    result = export(db, view="failed_calls", out=Path("calls.parquet"), base_dir=tmp_path)
    assert result.rows == 2
    table = pq.read_table(result.path)
    assert table.column("request_id").to_pylist() == ["req-disputes-a3", None]


def test_query_with_bound_params(db: Path, tmp_path: Path) -> None:
    result = export(
        db,
        query="SELECT id, amount_minor FROM payments WHERE currency = $cur ORDER BY id",
        params={"cur": "USD"},
        out=Path("usd.csv"),
        base_dir=tmp_path,
    )
    assert result.rows == 5
    assert [r["id"] for r in _read_csv(result.path)] == [f"pay_{i}" for i in range(5, 10)]


@pytest.mark.parametrize(
    "value",
    ["x' OR '1'='1", "read_text('/etc/passwd')", "'; DROP TABLE payments; --", "*"],
)
def test_injection_attempt_as_bound_value_finds_nothing(
    db: Path, tmp_path: Path, value: str
) -> None:
    result = export(
        db,
        query="SELECT * FROM findings WHERE run_id = $run AND entity_id = $id",
        params={"run": LAST, "id": value},
        out=Path("x.csv"),
        base_dir=tmp_path,
    )
    assert result.rows == 0
    text = result.path.read_text(encoding="utf-8-sig")
    assert "root:" not in text
    assert text.startswith('"run_id","check_name"')  # header only


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT * FROM read_csv('/etc/passwd', sep=':')",
        "SELECT * FROM read_parquet('/etc/passwd')",
        "COPY (SELECT 1) TO '/tmp/recon-export-escape.csv'",
        "ATTACH '/tmp/recon-other.duckdb' AS o",
        "SET enable_external_access = true",
        "INSTALL httpfs",
    ],
)
def test_queries_reaching_outside_are_refused(db: Path, tmp_path: Path, query: str) -> None:
    with pytest.raises(ConfigError) as info:
        export(db, query=query, out=Path("x.csv"), base_dir=tmp_path)
    assert "root:" not in str(info.value)
    assert not (tmp_path / "x.csv").exists()
    assert not list(tmp_path.iterdir())  # no temp file left either
    assert not Path("/tmp/recon-export-escape.csv").exists()


def test_read_only_connection_cannot_modify(db: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        export(db, query="DELETE FROM payments RETURNING id", out=Path("x.csv"), base_dir=tmp_path)
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM payments").fetchone() == (9,)
    con.close()


@pytest.mark.parametrize(
    "name", ["nope", "payments; DROP TABLE payments", 'payments" --', "main.payments", ""]
)
def test_unknown_table_names_are_refused(db: Path, tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="no table or view named"):
        export(db, table=name, out=Path("x.csv"), base_dir=tmp_path)


def test_a_view_is_accepted_by_name_wherever_a_table_is(db: Path, tmp_path: Path) -> None:
    # issue 15: `recon export --table failed_calls` failed because failed_calls is a view
    result = export(db, table="failed_calls", out=Path("calls.csv"), base_dir=tmp_path)
    assert result.rows == 2
    assert export(db, view="payments", out=Path("p.csv"), base_dir=tmp_path).rows == 9


def test_exactly_one_source(db: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        export(db, out=Path("x.csv"), base_dir=tmp_path)
    with pytest.raises(ConfigError, match="exactly one"):
        export(db, table="payments", query="SELECT 1", out=Path("x.csv"), base_dir=tmp_path)
    with pytest.raises(ConfigError, match="only a query"):
        export(db, table="payments", params={"a": 1}, out=Path("x.csv"), base_dir=tmp_path)


@pytest.mark.parametrize(
    "out", [Path("/etc/recon.csv"), Path("../escape.csv"), Path("sub/../../escape.csv")]
)
def test_output_outside_base_is_refused(db: Path, tmp_path: Path, out: Path) -> None:
    base = tmp_path / "exports"
    base.mkdir()
    with pytest.raises(ConfigError, match="outside"):
        export(db, table="payments", out=out, base_dir=base)
    assert not (tmp_path / "escape.csv").exists()
    assert not Path("/etc/recon.csv").exists()


def test_symlink_escape_is_refused(db: Path, tmp_path: Path) -> None:
    base = tmp_path / "exports"
    base.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (base / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ConfigError, match="outside"):
        export(db, table="payments", out=Path("link/x.csv"), base_dir=base)
    assert not list(outside.iterdir())


def test_absolute_path_inside_base_is_fine(db: Path, tmp_path: Path) -> None:
    result = export(db, table="payments", out=tmp_path / "p.parquet", base_dir=tmp_path)
    assert result.rows == 9


def test_without_a_root_any_writable_path_is_fine(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 15: exports go to any writable path the user names when no root is configured
    (tmp_path / "cwd").mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    assert export(db, table="payments", out=Path("p.csv")).path == (tmp_path / "cwd" / "p.csv")
    far = export(db, table="payments", out=Path("../elsewhere/p.csv"))
    assert far.path == tmp_path / "elsewhere" / "p.csv"
    assert far.path.is_file()
    (tmp_path / "locked").mkdir(mode=0o500)
    if os.access(tmp_path / "locked", os.W_OK):  # root writes anywhere
        return
    with pytest.raises(ConfigError, match="not writable"):
        export(db, table="payments", out=tmp_path / "locked" / "p.csv")


def test_format_from_suffix_or_argument(db: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="format"):
        export(db, table="payments", out=Path("p.txt"), base_dir=tmp_path)
    result = export(db, table="payments", out=Path("p.data"), fmt="parquet", base_dir=tmp_path)
    assert pq.read_table(result.path).num_rows == 9


def test_failed_export_keeps_previous_file(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "p.csv"
    target.write_text("previous\n")
    with pytest.raises(ConfigError):
        export(db, query="SELECT error('boom') FROM payments", out=target, base_dir=tmp_path)
    assert target.read_text() == "previous\n"
    assert sorted(os.listdir(tmp_path)) == ["p.csv"]


def test_missing_warehouse(tmp_path: Path) -> None:
    with pytest.raises(WarehouseError):
        export(tmp_path / "none.duckdb", table="payments", out=Path("x.csv"), base_dir=tmp_path)


def test_columns_of_every_kind(tmp_path: Path) -> None:
    path = tmp_path / "kinds.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE kinds AS SELECT '-5'::JSON AS j, 12::HUGEINT AS h,"
        " -12.50::DECIMAL(10,2) AS d,"
        " ['=a', NULL] AS ls, [[1], [2]] AS ll, {'a': 1, 'b': '=x'} AS s, MAP {'k': 1} AS m,"
        " '\\x01'::BLOB AS b, 'e'::ENUM('e', 'f') AS en, INTERVAL 1 DAY AS iv,"
        " DATE '2026-01-01' AS dt, true AS bo"
    )
    con.close()
    result = export(path, table="kinds", out=Path("k.csv"), base_dir=tmp_path)
    (row,) = _read_csv(result.path)
    assert row["j"] == "'-5"
    assert row["h"] == "12"
    assert row["d"] == "-12.50"
    assert row["ls"] == "'=a "
    assert row["s"] == '{"a":1,"b":"=x"}'
    assert row["en"] == "e"
    assert row["dt"] == "2026-01-01"
    assert export(path, table="kinds", out=Path("k.parquet"), base_dir=tmp_path).rows == 1
