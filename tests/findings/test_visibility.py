"""Acknowledgements, owners and states are visible wherever findings are: findings_current,
findings.csv/.parquet, the report's explorer data, and a lapsed acknowledgement says why."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import duckdb
import orjson
import pyarrow.parquet as pq
from typer.testing import CliRunner

from recon.cli import app
from recon.findings.acks import acks_path
from recon.findings.trail_table import load_acks
from recon.report import render_report
from recon.warehouse.published import prepare_for_readers
from tests.ledger.support import warehouse

from .conftest import KEY_A, KEY_B, KEY_C, KEY_D, R1


def _decide(db: Path) -> None:
    runner = CliRunner()
    for args in (
        ["ack", KEY_A, "--note", "FX rounding"],
        ["assign", KEY_B, "--to", "ann"],
        ["resolve", KEY_C, "--reason", "timing", "--note", "settled"],
        ["ack", KEY_D, "--note", "old amount"],
    ):
        assert runner.invoke(app, ["findings", *args, "--db", str(db)]).exit_code == 0
    con = warehouse(db)
    con.execute("UPDATE findings SET amount_minor = 701 WHERE finding_key = ?", [KEY_D])
    load_acks(con, acks_path(db))  # what the next night's load does
    con.close()
    prepare_for_readers(db)


WANT = {
    KEY_A: ("acknowledged", None, "FX rounding", None),
    KEY_B: ("investigating", "ann", None, None),
    KEY_C: ("resolved_manually", None, "settled", "timing"),
    KEY_D: ("open", None, "old amount", None),
}


def test_findings_current_carries_the_work_state(db: Path) -> None:
    _decide(db)
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(
        "SELECT finding_key, work_state, owner, work_note, work_reason, lapsed_reason "
        "FROM findings_current ORDER BY finding_key"
    ).fetchall()
    con.close()
    got = {r[0]: r[1:5] for r in rows}
    assert got == WANT
    lapsed = {r[0]: r[5] for r in rows}
    assert lapsed[KEY_D] is not None
    assert re.fullmatch(
        r"amount changed since acknowledged by \S+ on \d{4}-\d\d-\d\d", lapsed[KEY_D]
    )
    assert [k for k, v in lapsed.items() if v] == [KEY_D]


def test_report_files_and_explorer_carry_the_work_state(db: Path, tmp_path: Path) -> None:
    _decide(db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        paths = render_report(con, run_id=R1, reports_dir=tmp_path / "reports")
    finally:
        con.close()
    rows = list(csv.DictReader(io.StringIO(paths.findings_csv.read_text(encoding="utf-8-sig"))))
    got = {
        r["finding_key"]: (
            r["work_state"],
            r["owner"] or None,
            r["work_note"] or None,
            r["work_reason"] or None,
        )
        for r in rows
    }
    assert got == WANT
    assert next(r for r in rows if r["finding_key"] == KEY_D)["lapsed_reason"].startswith(
        "amount changed since acknowledged by"
    )
    table = pq.read_table(paths.findings_parquet)
    assert {"work_state", "owner", "work_note", "work_reason", "lapsed_reason"} <= set(
        table.column_names
    )
    html = paths.report_html.read_text()
    assert '<select id="f-work">' in html
    assert '<option value="investigating">investigating (1)</option>' in html
    assert '<option value="ann">ann (1)</option>' in html
    data = orjson.loads(re.search(r'id="findings-data">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    assert set(data["works"]) == {"open", "investigating", "acknowledged", "resolved_manually"}
    assert data["owners"] == ["ann"]
    assert sum(1 for x in data["col"]["lapsed"] if x) == 1


def test_an_xlsx_export_of_findings_current_carries_the_work_state(
    db: Path, tmp_path: Path
) -> None:
    import openpyxl

    _decide(db)
    result = CliRunner().invoke(
        app, ["export", "findings.xlsx", "--table", "findings_current", "--db", str(db)]
    )
    assert result.exit_code == 0, result.stderr
    ws = openpyxl.load_workbook(tmp_path / "findings.xlsx").worksheets[0]
    values = list(ws.iter_rows(values_only=True))
    header = list(values[0])
    got = {
        r[header.index("finding_key")]: (r[header.index("work_state")], r[header.index("owner")])
        for r in values[1:]
    }
    assert got == {k: (v[0], v[1]) for k, v in WANT.items()}
