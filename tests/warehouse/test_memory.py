"""DuckDB sized from the machine, memory given back, a load that ran out tried again (issue 23)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from recon import database, memory
from recon.memory import AUTO_LIMIT_MAX, duckdb_config, parse_size, release
from recon.night import warehouse as wh_module


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
    from recon.night.landing import RunLanding

    landing = RunLanding(tmp_path / "landing", "20261123T020000Z-abcdef")
    landing.create({"started_at": "2026-11-23T02:00:00+00:00"})
    con = database.connect(tmp_path / "w.duckdb", memory_limit="100MiB")
    from recon.night.migrations import apply_migrations

    apply_migrations(con)
    result = wh_module.load_run(con, landing)
    con.close()
    assert len(calls) == 2
    assert result.status == "failed"  # nothing extracted: a failed run, loaded all the same
