"""Publishing by rename: readers never block a run and never see a half-written file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from recon.errors import WarehouseError
from recon.warehouse.working_copy import Warehouse

READER = textwrap.dedent(
    """
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    first = con.execute("SELECT count(*) FROM t").fetchone()[0]
    print("ready", first, flush=True)
    sys.stdin.readline()  # hold the file open until told to go on
    again = con.execute("SELECT count(*) FROM t").fetchone()[0]
    print("still", again, flush=True)
    """
)


def _write(wh: Warehouse, rows: int) -> None:
    with wh.session("test", fresh=True, publish=True) as con:
        con.execute("CREATE OR REPLACE TABLE t AS SELECT range AS i FROM range(?)", [rows])


def test_a_reader_holding_the_file_neither_blocks_nor_sees_the_run(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path / "recon.duckdb")
    _write(wh, 10)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(wh.path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout is not None
        assert reader.stdin is not None
        assert reader.stdout.readline().split() == ["ready", "10"]
        _write(wh, 20)  # a whole run's write while the reader holds the file
        reader.stdin.write("go\n")
        reader.stdin.flush()
        assert reader.stdout.readline().split() == ["still", "10"]
    finally:
        reader.kill()
        reader.communicate()  # reaps it and closes its pipes
    con = duckdb.connect(str(wh.path), read_only=True)
    assert con.execute("SELECT count(*) FROM t").fetchone() == (20,)


def test_a_failed_session_leaves_the_published_file_untouched(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path / "recon.duckdb")
    _write(wh, 5)

    def fail_midway() -> None:
        with wh.session("test", fresh=True, publish=True) as con:
            con.execute("DELETE FROM t")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fail_midway()
    assert duckdb.connect(str(wh.path), read_only=True).execute(
        "SELECT count(*) FROM t"
    ).fetchone() == (5,)
    assert not wh.work_path.exists()
    assert not wh.lock_path.exists()


def test_a_stale_wal_beside_the_published_file_does_not_block(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path / "recon.duckdb")
    _write(wh, 3)
    Path(f"{wh.path}.wal").write_bytes(b"garbage from a crashed writer")
    _write(wh, 4)
    assert duckdb.connect(str(wh.path), read_only=True).execute(
        "SELECT count(*) FROM t"
    ).fetchone() == (4,)


def test_a_second_run_is_refused_while_one_holds_the_lock(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path / "recon.duckdb")
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        wh.lock_path.write_text(f'{{"owner": "other-run", "pid": {holder.pid}}}')
        with pytest.raises(WarehouseError, match="another recon run"):
            wh.acquire("mine")
    finally:
        holder.kill()
        holder.wait()
    wh.acquire("mine")  # the holder is dead: its lock is stale and taken over
    wh.release()


def test_a_db_path_whose_folder_cannot_exist_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(WarehouseError, match="cannot create"):
        Warehouse(blocker / "recon.duckdb").acquire("x")
