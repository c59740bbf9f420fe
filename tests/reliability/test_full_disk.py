"""A full disk (issue 25, point 10), on a real small tmpfs (skipped where mounting is not
allowed): the warehouse's disk full stops the night in one line naming it, never six
tracebacks ending in "no transaction is active"; the reports' disk full leaves the
warehouse published and consistent, and the run says so in its reason and exit code.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import typer

from recon.cli.common import guard
from recon.night import nightly as steps

from .conftest import overrides_for, read_only
from .hostile import Hostile

pytestmark = [pytest.mark.integration]


@contextmanager
def small_disk(where: Path, size: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.parametrize("hostile_server", [{"count": 5000}], indirect=True)
def test_the_reports_disk_full_leaves_the_warehouse_published_and_says_so(
    hostile_server: Hostile, tmp_path: Path
) -> None:
    overrides = overrides_for(tmp_path, hostile_server.url)
    with small_disk(tmp_path / "reports", "40k"):
        summary = steps.run_local(overrides)
    assert summary.exit_code == 1
    assert summary.report_dir is None
    assert summary.reason is not None
    assert "the report could not be written (No space left on device" in summary.reason
    assert f"recon report --run {summary.run_id}" in summary.reason
    con = read_only(overrides["db"])
    try:
        assert con.execute("SELECT count(*) FROM payments").fetchone() == (5000,)
        loaded = con.execute("SELECT loaded_at IS NOT NULL FROM runs").fetchone()
        assert loaded == (True,)
    finally:
        con.close()


@pytest.mark.parametrize("hostile_server", [{"count": 5000}], indirect=True)
def test_the_warehouse_disk_full_is_one_line_naming_it(
    hostile_server: Hostile, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overrides = overrides_for(tmp_path, hostile_server.url)
    with small_disk(tmp_path / "wh", "1m") as disk:
        overrides["db"] = str(disk / "recon.duckdb")
        with pytest.raises(typer.Exit) as stopped:
            guard(lambda: steps.run_local(overrides))
        left = sorted(p.name for p in disk.iterdir())
    assert stopped.value.exit_code == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1
    assert lines[0].startswith("recon: aborted: no space left on the disk holding the warehouse")
    assert str(disk) in lines[0]
    assert "recon.duckdb" not in left  # nothing half-published
