"""`recon export` on the command line: .xlsx with a sheet per table, views by name, what was
left out as personal data, RECON_EXPORT_ROOT."""

from __future__ import annotations

import os
from pathlib import Path

import openpyxl
import pytest
from typer.testing import CliRunner

from recon.cli import app
from tests.report.synthetic_warehouse import build


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    path = tmp_path / "recon.duckdb"
    con = build(path)
    con.execute(
        "INSERT INTO payments VALUES ('pay_1', 1050, 'EUR', 'confirmed', 'ref', now(), "
        "'{\"email\": \"ann@example.com\"}', 'h', 'r1', 'r1', NULL)"
    )
    con.close()
    monkeypatch.chdir(tmp_path)
    return path


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["export", *args])
    return result.exit_code, result.stdout, result.stderr


def test_xlsx_with_a_table_and_a_view(db: Path, tmp_path: Path) -> None:
    code, out, err = _run(
        "book.xlsx", "--table", "payments", "--table", "failed_calls", "--db", str(db)
    )
    assert code == 0, err
    assert "wrote" in out
    assert "left out as personal data: raw" in err
    book = openpyxl.load_workbook(tmp_path / "book.xlsx")
    assert book.sheetnames == ["payments", "failed_calls"]
    header = [c.value for c in book["payments"][1]]
    assert "raw" not in header
    assert book["payments"].cell(2, header.index("amount") + 1).value == 10.5


def test_include_raw_keeps_personal_data(db: Path, tmp_path: Path) -> None:
    code, _, err = _run("p.csv", "--table", "payments", "--include-raw", "--db", str(db))
    assert code == 0, err
    assert "ann@example.com" in (tmp_path / "p.csv").read_text()
    assert "left out" not in err


def test_an_allowed_root_when_configured(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "exports").mkdir()
    monkeypatch.setenv("RECON_EXPORT_ROOT", str(tmp_path / "exports"))
    code, _, err = _run("../out.csv", "--table", "payments", "--db", str(db))
    assert code == 2
    assert "outside the folder exports may write to" in err
    assert not (tmp_path / "out.csv").exists()
    assert _run("in.csv", "--table", "payments", "--db", str(db))[0] == 0
    assert (tmp_path / "exports" / "in.csv").is_file()
