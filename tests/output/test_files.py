"""Issue 14 twins: one atomic-write helper (recon.output.atomic) and one run-id rule."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from recon.errors import ConfigError
from recon.output import atomic as files
from recon.output import spreadsheet
from recon.runid import check_run_id


def test_spreadsheet_and_reports_share_the_one_helper() -> None:
    assert spreadsheet.atomic_path is files.atomic_path
    assert spreadsheet.atomic_write_bytes is files.atomic_write_bytes
    assert spreadsheet.atomic_write_text is files.atomic_write_text


@pytest.mark.parametrize("durable", [False, True])
def test_a_library_writes_the_temporary_path_then_it_is_renamed(
    tmp_path: Path, durable: bool
) -> None:
    target = tmp_path / "sub" / "t.parquet"
    with files.atomic_path(target, durable=durable) as tmp:
        assert tmp.parent == target.parent
        assert tmp.name.startswith(".t.parquet.")
        pq.write_table(pa.table({"a": [1, 2]}), tmp)
        assert not target.exists()
    assert pq.read_table(target).num_rows == 2
    assert os.listdir(target.parent) == ["t.parquet"]
    assert target.stat().st_mode & 0o777 == 0o644


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    files.atomic_write_bytes(target, b"old", durable=True)

    def killed() -> None:
        with files.atomic_path(target, durable=True) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        killed()
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["state.json"]
    files.atomic_write_text(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"


def test_the_report_accepts_only_what_landing_calls_a_run_id(tmp_path: Path) -> None:
    from recon.report.render import render_report
    from tests.report.synthetic_warehouse import build

    con = build(tmp_path / "w.duckdb")
    con.execute(
        "INSERT INTO runs VALUES ('nightly-1', TIMESTAMPTZ '2026-11-21 02:00:00+00', NULL, "
        "'complete', NULL, NULL, 'cli', NULL)"
    )
    with pytest.raises(ConfigError, match="not a recon run id") as refused:
        check_run_id("nightly-1")
    with pytest.raises(ConfigError, match="not a recon run id") as also:
        render_report(con, run_id="nightly-1", reports_dir=tmp_path / "reports")
    assert str(also.value) == str(refused.value)
