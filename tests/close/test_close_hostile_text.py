"""Control and bidirectional characters (NUL, ESC, U+202E) in a finding's detail or a note
are shown as escapes in close.html and close.xlsx, as in report.html and the CSV files
(issue 38, point 4): never obeyed by the browser or hidden by the spreadsheet."""

from __future__ import annotations

from pathlib import Path

import duckdb
import openpyxl
from typer.testing import CliRunner

from recon.cli import app

HOSTILE = "refund A\u202eB\x00C\x1b[31mD"
RAW = ("\u202e", "\x00", "\x1b")


def test_control_characters_are_escaped_in_close_html_and_xlsx(db: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(db))
    con.execute("UPDATE findings SET detail = ?, entity_id = entity_id || ?", [HOSTILE, "\u202e"])
    con.close()
    result = CliRunner().invoke(
        app, ["close", "2026-10", "--db", str(db), "--reports", str(tmp_path / "r")]
    )
    assert result.exit_code == 0, result.output
    folder = tmp_path / "r" / "close-2026-10"
    html = (folder / "close.html").read_text(encoding="utf-8")
    assert "\\u202e" in html
    assert not any(c in html for c in RAW)
    wb = openpyxl.load_workbook(folder / "close.xlsx")
    cells = [
        str(v) for ws in wb.worksheets for row in ws.iter_rows(values_only=True) for v in row if v
    ]
    assert any("\\u202e" in c for c in cells)
    assert not any(ch in c for c in cells for ch in RAW)
