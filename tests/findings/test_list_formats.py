"""`recon findings list` (issue 42 point 2, issue 38): a header row, severity and both ages,
`--format table|csv|json`, an unknown --check or --state refused naming the known ones, and
quiet when its reader closes the pipe."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.warehouse.migrations import apply_migrations

NOW = datetime.now(UTC).replace(microsecond=0)


def _warehouse(path: Path, findings: int) -> Path:
    con = duckdb.connect(str(path))
    apply_migrations(con)
    con.execute(
        "INSERT INTO runs (run_id, started_at, status, loaded_at) VALUES "
        "('r0', ?, 'complete', ?), ('r1', ?, 'complete', ?)",
        [NOW - timedelta(days=9), NOW, NOW, NOW],
    )
    con.execute(
        "INSERT INTO check_runs BY NAME SELECT 'r1' AS run_id, name AS check_name, "
        "'error' AS severity, 'failed' AS status, 1 AS finding_count "
        "FROM (VALUES ('over_refunded'), ('open_invoices')) AS t(name)"
    )
    con.execute(
        "INSERT INTO findings BY NAME SELECT 'r1' AS run_id, 'over_refunded' AS check_name, "
        "CASE WHEN i % 2 = 0 THEN 'error' ELSE 'warn' END AS severity, "
        "'over_refunded:pay_' || i || ':over' AS finding_key, 'open' AS state, "
        "'payment' AS entity, 'pay_' || i AS entity_id, 'EUR' AS currency, "
        "1000 + i AS amount_minor, 'over' AS issue_type, '=HYPERLINK(1)' AS detail, "
        "'r0' AS first_seen_run, ?::TIMESTAMPTZ AS item_at FROM range(?) AS t(i)",
        [NOW - timedelta(days=30), findings],
    )
    con.close()
    return path


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return _warehouse(tmp_path / "recon.duckdb", 3)


def _list(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["findings", "list", "--db", str(db), *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_table_has_a_header_severity_and_both_ages(db: Path) -> None:
    code, out, _ = _list(db)
    assert code == 0
    header, *rows = out.splitlines()
    assert header.startswith("work state")
    assert "severity" in header
    assert "known since (days)" in header
    assert "item date (age)" in header
    assert len(rows) == 3
    assert rows[0].split()[2] == "error"  # most severe first, severity shown
    assert "(9 d)" in rows[0]  # known for 9 days
    assert "(30 d)" in rows[0]  # the item is 30 days old


def test_csv_carries_every_column_spreadsheet_safe(db: Path) -> None:
    code, out, _ = _list(db, "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 3
    assert rows[0]["severity"] == "error"
    assert rows[0]["known_days"] == "9"
    assert rows[0]["item_age_days"] == "30"
    assert rows[0]["amount"].startswith("EUR ")
    assert rows[0]["detail"] == "'=HYPERLINK(1)"  # a formula neutralised


def test_json_is_one_array_of_objects(db: Path) -> None:
    code, out, _ = _list(db, "--format", "json")
    assert code == 0
    items = json.loads(out)
    assert [i["severity"] for i in items] == ["error", "error", "warn"]
    assert items[0]["known_days"] == 9
    assert items[0]["item_age_days"] == 30
    assert items[0]["amount_minor"] == 1000
    assert items[0]["detail"] == "=HYPERLINK(1)"  # JSON keeps values as they are


def test_an_unknown_check_is_refused_naming_the_known_ones(db: Path) -> None:
    code, out, err = _list(db, "--check", "no_such_check")
    assert code == 2
    assert out == ""
    assert "no_such_check" in err
    assert "open_invoices, over_refunded" in err


def test_an_unknown_state_is_refused_naming_the_known_ones(db: Path) -> None:
    code, _, err = _list(db, "--state", "shelved")
    assert code == 2
    assert "investigating" in err
    assert "acknowledged" in err


def test_an_unknown_format_is_refused(db: Path) -> None:
    code, _, err = _list(db, "--format", "xml")
    assert code == 2
    assert "table, csv, json" in err


@pytest.mark.slow
def test_a_reader_that_closes_the_pipe_gets_no_error(tmp_path: Path) -> None:
    db = _warehouse(tmp_path / "big.duckdb", 20_000)  # far more than a pipe's buffer
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    recon = Path(sys.executable).with_name("recon")
    done = subprocess.run(
        f"set -o pipefail; '{recon}' findings list --db '{db}' | head -1",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert done.stdout.startswith("work state")
    assert "Broken pipe" not in done.stderr
    assert "Traceback" not in done.stderr
    assert done.returncode == 0


def test_a_worklist_longer_than_an_excel_sheet_is_refused_with_the_parquet_command(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("recon.workbench.worklist.EXCEL_MAX_ROWS", 3)  # 2 findings a sheet
    out = tmp_path / "work.xlsx"
    result = CliRunner().invoke(app, ["findings", "export", str(out), "--db", str(db)])
    assert result.exit_code == 2
    assert "3 findings do not fit one Excel sheet (2 rows)" in result.stderr
    assert 'recon export findings.parquet --query "SELECT * FROM findings_current"' in (
        result.stderr
    )
    assert not out.exists()
    narrowed = CliRunner().invoke(
        app, ["findings", "export", str(out), "--db", str(db), "--state", "new"]
    )
    assert narrowed.exit_code == 0, narrowed.stderr
    assert "wrote 0 finding(s)" in narrowed.stdout
    assert out.exists()


def test_a_bulk_ack_by_filter_is_written_in_chunks_and_the_chain_holds(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("recon.findings.acks.APPEND_CHUNK", 2)  # 3 findings: two writes
    acked = CliRunner().invoke(
        app, ["findings", "ack", "--check", "over_refunded", "--note", "bulk", "--db", str(db)]
    )
    assert acked.exit_code == 0, acked.stderr
    assert "acknowledged 3 finding(s)" in acked.stdout
    verified = CliRunner().invoke(app, ["findings", "verify", "--db", str(db)])
    assert verified.exit_code == 0, verified.stdout + verified.stderr
    code, out, _ = _list(db, "--state", "acknowledged", "--format", "json")
    assert code == 0
    assert len(json.loads(out)) == 3
