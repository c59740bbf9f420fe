"""Files damaged on disk (issue 25, points 8 and 9): a landed batch with bytes overwritten,
a warehouse cut in half. One line naming the file, never a traceback; `--resume` fetches the
pages of a batch it cannot read; a warehouse that cannot be opened stops the night before
any request.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.night import nightly as steps

from .conftest import overrides_for, read_only
from .hostile import Hostile

pytestmark = [pytest.mark.integration]


def _damage(path: Path, at: float = 0.5, size: int = 2000) -> None:
    data = bytearray(path.read_bytes())
    start = int(len(data) * at)
    data[start : start + size] = b"\xff" * min(size, len(data) - start)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("hostile_server", [{"count": 5000}], indirect=True)
def test_a_damaged_landed_batch_is_named_and_resume_fetches_it_again(
    hostile_server: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_LANDING_BATCH_RECORDS", "2000")  # payments: 3 batches
    overrides = overrides_for(tmp_path, hostile_server.url)
    run_id = steps.start_step(overrides)
    steps.extract_step(overrides, run_id)
    batch = tmp_path / "data" / "landing" / run_id / "payments" / "batch-000001.parquet"
    _damage(batch)

    result = CliRunner().invoke(
        app, ["load", "--run", run_id, "--db", overrides["db"], "--landing", overrides["landing"]]
    )
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("recon: aborted: landed batch ")
    assert str(batch) in lines[0]
    assert f"--resume {run_id}" in lines[0]

    before = hostile_server.payments_requests()
    summary = steps.run_local(overrides, resume=run_id)
    assert summary.status == "complete"
    assert hostile_server.payments_requests() > before  # its pages were fetched again
    con = read_only(overrides["db"])
    try:
        assert con.execute("SELECT count(DISTINCT id), count(*) FROM payments").fetchone() == (
            5000,
            5000,
        )
    finally:
        con.close()


def test_a_damaged_warehouse_stops_the_night_before_any_request(
    hostile_server: Hostile, tmp_path: Path
) -> None:
    overrides = overrides_for(tmp_path, hostile_server.url)
    steps.run_local(overrides)  # a published warehouse
    db = Path(overrides["db"])
    with db.open("r+b") as fh:
        fh.truncate(db.stat().st_size // 2)
    hostile_server.requests.clear()

    result = CliRunner().invoke(
        app,
        [
            "nightly",
            "--base-url",
            hostile_server.url,
            "--db",
            str(db),
            "--landing",
            overrides["landing"],
            "--reports",
            overrides["reports"],
        ],
    )
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"recon: aborted: the warehouse {db} is damaged")
    assert hostile_server.requests == []
