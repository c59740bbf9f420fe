"""Real volume (issue 38): the report streams its findings within DuckDB's memory limit, every
connection honours RECON_DUCKDB_MEMORY_LIMIT with a folder to spill to, and a night whose
report failed is never `complete`."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from recon.night.steps import report_step
from recon.report import render_report
from recon.warehouse.database import connect, open_readonly, spill_directory

from .synthetic_warehouse import COMPLETE, LAST, build

# 300,000 findings: sql/report/findings.sql read into Arrow needed ~96 MiB of DuckDB memory
# (the join with finding_states held every finding); the report now streams under 64 MiB.
MANY = 300_000


@pytest.mark.slow
def test_a_report_of_300k_findings_is_written_under_64_mib(tmp_path: Path) -> None:
    db = tmp_path / "recon.duckdb"
    build(db, extra_findings=MANY).close()
    con = connect(db, read_only=True, memory_limit="64MiB")
    try:
        paths = render_report(con, run_id=LAST, reports_dir=tmp_path / "reports", top_n=5)
        total = con.execute("SELECT count(*) FROM findings WHERE run_id = ?", [LAST]).fetchone()
    finally:
        con.close()
    assert total is not None
    assert total[0] > MANY
    assert pq.ParquetFile(paths.findings_parquet).metadata.num_rows == total[0]
    with paths.findings_csv.open(encoding="utf-8") as fh:
        assert sum(1 for _ in fh) == total[0] + 1  # one header row
    # the files keep the order (check, entity id, issue type) and the work columns
    table = pq.read_table(paths.findings_parquet, columns=["check_name", "entity_id", "work_state"])
    keys = list(zip(table["check_name"].to_pylist(), table["entity_id"].to_pylist(), strict=True))
    assert keys == sorted(keys)
    assert "open" in set(table["work_state"].to_pylist())
    html = paths.report_html.read_text(encoding="utf-8")
    assert "findings.parquet" in html
    assert "more than this page explores" in html  # the first findings per check, not all


def test_read_only_connections_honour_the_memory_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "recon.duckdb"
    duckdb.connect(str(db)).close()
    monkeypatch.setenv("RECON_DUCKDB_MEMORY_LIMIT", "300MiB")
    con = open_readonly(db)
    try:
        limit, spill = con.execute(
            "SELECT current_setting('memory_limit'), current_setting('temp_directory')"
        ).fetchone() or (None, None)
    finally:
        con.close()
    assert limit == "300.0 MiB"
    assert spill == str(spill_directory(db))


def test_the_spill_folder_is_the_users_own_when_the_warehouse_folder_is_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("recon.warehouse.database.os.access", lambda *_: False)
    spill = spill_directory(tmp_path / "recon.duckdb")
    assert not spill.is_relative_to(tmp_path)
    assert spill.name == "recon.duckdb.tmp"


def test_a_night_whose_report_failed_is_not_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "recon.duckdb"
    build(db).close()

    def out_of_memory(*_: object, **__: object) -> None:
        raise duckdb.OutOfMemoryException("Out of Memory Error: (63.8 MiB/64.0 MiB used)\nmore")

    monkeypatch.setattr("recon.report.render_report", out_of_memory)
    summary = report_step({"db": str(db), "reports": str(tmp_path / "reports")}, COMPLETE)
    assert summary.exit_code == 1
    assert summary.status == "incomplete"
    assert summary.reason is not None
    assert "Out of Memory Error" in summary.reason
    assert "RECON_DUCKDB_MEMORY_LIMIT" in summary.reason
    assert "\n" not in summary.reason
    con = open_readonly(db)
    try:
        row = con.execute("SELECT status, reason FROM runs WHERE run_id = ?", [COMPLETE]).fetchone()
    finally:
        con.close()
    assert row is not None
    assert row[0] == "incomplete"
    assert "report could not be written" in row[1]
