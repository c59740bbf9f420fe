"""One wait while the warehouse file is held, for readers (`open_readonly`) and for the action
that records trail lines (`open_record`); they differ only for a hold of this process's own."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from recon.errors import WarehouseError
from recon.findings.record import open_record
from recon.warehouse.database import connect, open_readonly, open_when_free

_HOLD = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
print("held", flush=True)
sys.stdin.read()
"""


def _db(tmp_path: Path) -> Path:
    db = tmp_path / "wh.duckdb"
    connect(db).close()
    return db


def test_no_file_is_none_for_the_recorder_and_an_error_for_a_reader(tmp_path: Path) -> None:
    missing = tmp_path / "none.duckdb"
    assert open_record(missing, wait_s=0) is None
    with pytest.raises(WarehouseError):
        open_readonly(missing, wait_s=0)
    assert not missing.exists()


def test_a_hold_of_this_process_is_given_up_by_the_recorder_waited_for_by_a_reader(
    tmp_path: Path,
) -> None:
    db = _db(tmp_path)
    reader = open_readonly(db)
    try:
        assert open_record(db, wait_s=5) is None  # at once: its own load copies the trail
    finally:
        reader.close()
    writer = connect(db)
    try:
        assert (
            open_when_free(db, read_only=True, wait_s=5, poll_s=0.1, wait_for_this_process=False)
            is None
        )
        with pytest.raises(WarehouseError, match="different configuration"):
            open_readonly(db, wait_s=0)
    finally:
        writer.close()


def test_another_programs_lock_is_waited_for_then_named(tmp_path: Path) -> None:
    db = _db(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(WarehouseError, match="open in another program"):
            open_record(db, wait_s=0.3)
        with pytest.raises(WarehouseError, match="lock"):
            open_readonly(db, wait_s=0.3)
        release = threading.Timer(0.5, holder.communicate, [""])
        release.start()
        con = open_readonly(db, wait_s=60)  # waits until the holder lets go
        con.close()
        release.join()
    finally:
        if holder.poll() is None:
            holder.communicate("")
    con = open_record(db, wait_s=0)
    assert con is not None
    con.close()
