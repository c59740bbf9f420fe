"""DuckDB sized from the machine, memory given back, a load that ran out tried again (issue 23)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from recon.warehouse import database, memory
from recon.warehouse import load as wh_module
from recon.warehouse.memory import (
    AUTO_LIMIT_MAX,
    duckdb_config,
    parse_size,
    release,
)


def test_auto_is_bounded_and_a_set_size_is_kept() -> None:
    auto = duckdb_config("auto")
    assert auto == duckdb_config(None)
    limit = parse_size(str(auto["memory_limit"]))
    assert limit is not None
    assert limit <= AUTO_LIMIT_MAX
    assert int(auto["threads"]) >= 1
    read = parse_size(str(duckdb_config("auto", read_only=True)["memory_limit"]))
    assert read is not None
    assert read <= limit
    assert duckdb_config("2GB")["memory_limit"] == "2GB"
    assert int(duckdb_config("2GB")["threads"]) >= 1


def test_auto_follows_a_small_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "available_memory", lambda: 400 * 2**20)
    assert duckdb_config("auto")["memory_limit"] == "100MiB"
    assert duckdb_config("auto")["threads"] == 1


@pytest.mark.parametrize(
    ("text", "size"),
    [("300MB", 300 * 10**6), ("2GiB", 2 * 2**30), ("134217728B", 134217728), ("x", None)],
)
def test_parse_size(text: str, size: int | None) -> None:
    assert parse_size(text) == size


def test_release_runs_anywhere() -> None:
    release()


def test_the_quiet_collector_freezes_once_and_the_process_still_exits_quietly() -> None:
    # In a process of its own: the frozen objects and the threshold are the whole process's.
    script = (
        "import gc, duckdb\n"
        "from recon.warehouse.memory import YOUNG_COLLECTION, quiet_collector\n"
        "duckdb.connect().execute('SELECT 1').fetchall()\n"
        "quiet_collector()\n"
        "frozen = gc.get_freeze_count()\n"
        "quiet_collector()  # once: a second night of the process freezes nothing more\n"
        "assert gc.get_freeze_count() == frozen > 0, frozen\n"
        "assert gc.get_threshold()[0] == YOUNG_COLLECTION\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    # unfrozen at exit: DuckDB's bindings would otherwise report every object as leaked
    assert "leaked" not in done.stderr


def test_a_connection_gets_the_auto_limit(tmp_path: Path) -> None:
    con = database.connect(tmp_path / "w.duckdb", memory_limit="auto")
    value = con.execute("SELECT current_setting('memory_limit')").fetchone()
    con.close()
    assert value is not None
    limit = parse_size(str(value[0]).replace(" ", ""))
    assert limit is not None
    assert limit <= AUTO_LIMIT_MAX


def test_a_load_that_runs_out_of_memory_is_tried_again_under_twice_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = wh_module._load_transaction

    def flaky(con: duckdb.DuckDBPyConnection, *args: Any) -> Any:
        calls.append(str(con.execute("SELECT current_setting('memory_limit')").fetchone()))
        if len(calls) == 1:
            raise duckdb.OutOfMemoryException("Out of Memory Error: (test)")
        return real(con, *args)

    monkeypatch.setattr(wh_module, "_load_transaction", flaky)
    from recon.warehouse.landing import RunLanding

    landing = RunLanding(tmp_path / "landing", "20261123T020000Z-abcdef")
    landing.create({"started_at": "2026-11-23T02:00:00+00:00"})
    con = database.connect(tmp_path / "w.duckdb", memory_limit="100MiB")
    from recon.warehouse.migrations import apply_migrations

    apply_migrations(con)
    result = wh_module.load_run(con, landing)
    con.close()
    assert len(calls) == 2
    assert result.status == "failed"  # nothing extracted: a failed run, loaded all the same


def test_running_out_inside_the_transaction_is_tried_again_and_then_said_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DuckDB runs out in a statement of the transaction (not around it): the load is rolled
    # back and tried again under twice the limit, not turned into a failed night at once.
    from recon.errors import WarehouseError
    from recon.warehouse.landing import RunLanding
    from recon.warehouse.migrations import apply_migrations

    landing = RunLanding(tmp_path / "landing", "20261123T020000Z-abcdef")
    landing.create({"started_at": "2026-11-23T02:00:00+00:00"})
    rl = landing.resource("payments")
    rl.add_page(offset=0, next_offset=None, records=[{"id": "pay_1"}], request_id="r")
    rl.finish(status="complete", reason=None, calls=[])
    real = wh_module.load_resource
    limits: list[str] = []

    def runs_out(con: duckdb.DuckDBPyConnection, *args: Any, **kwargs: Any) -> Any:
        limits.append(str(con.execute("SELECT current_setting('memory_limit')").fetchone()))
        if len(limits) == 1:
            raise duckdb.OutOfMemoryException("Out of Memory Error: (test)")
        return real(con, *args, **kwargs)

    monkeypatch.setattr(wh_module, "load_resource", runs_out)
    con = database.connect(tmp_path / "w.duckdb", memory_limit="100MiB")
    apply_migrations(con)
    result = wh_module.load_run(con, landing)
    assert len(limits) == 2
    assert limits[0] != limits[1]  # the second try under twice the limit
    assert result.status == "complete"
    assert con.execute("SELECT count(*) FROM payments").fetchone() == (1,)

    def always(con: duckdb.DuckDBPyConnection, *args: Any, **kwargs: Any) -> Any:
        raise duckdb.OutOfMemoryException("Out of Memory Error: (test)")

    monkeypatch.setattr(wh_module, "load_resource", always)
    again = RunLanding(tmp_path / "landing", "20261124T020000Z-abcdef")
    again.create({"started_at": "2026-11-24T02:00:00+00:00"})
    rl = again.resource("payments")
    rl.add_page(offset=0, next_offset=None, records=[{"id": "pay_1"}], request_id="r")
    rl.finish(status="complete", reason=None, calls=[])
    with pytest.raises(WarehouseError, match="loading run 20261124T020000Z-abcdef failed: Out of"):
        wh_module.load_run(con, again)
    con.close()
