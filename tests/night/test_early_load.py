"""Loading while extracting (recon.night.early): each resource is loaded as its extraction
ends, and the warehouse ends exactly as a load after the extraction leaves it; anything
unusual falls back to that load."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest

from recon.night import early
from recon.night import nightly as steps
from recon.night.extract import StoppedError
from recon.warehouse import published
from recon.warehouse.memory import duckdb_config, parse_size

from .conftest import overrides_for, sandbox
from .test_resume import _content

pytestmark = [pytest.mark.integration]


@pytest.fixture
def loaders(monkeypatch: pytest.MonkeyPatch) -> list[early.EarlyLoad]:
    """Every early load started in this test, in order."""
    started: list[early.EarlyLoad] = []
    real = early.start

    def start(*args: Any, **kwargs: Any) -> early.EarlyLoad:
        loader = real(*args, **kwargs)
        started.append(loader)
        return loader

    monkeypatch.setattr(early, "start", start)
    return started


def _tables(db: Path) -> dict[str, list[Any]]:
    """Every row of every table, without its timestamps (when a row was written)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out: dict[str, list[Any]] = {}
        tables = con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()
        for (table,) in tables:
            cols = [
                f'"{name}"'
                for name, kind in con.execute(
                    "SELECT column_name, data_type FROM duckdb_columns() "
                    "WHERE table_name = ? ORDER BY column_index",
                    [table],
                ).fetchall()
                if not kind.startswith("TIMESTAMP")
            ]
            rows = con.execute(f'SELECT {", ".join(cols)} FROM "{table}"').fetchall()
            out[table] = sorted(rows, key=repr)
        return out
    finally:
        con.close()


def _extract_and_load(over: dict[str, Any], *, load_early: bool) -> str:
    run_id = steps.start_step(over, probe_api=False)
    steps.extract_step(over, run_id, load_early=load_early)
    steps.load_step(over, run_id, publish=True)
    return run_id


def test_the_warehouse_is_the_same_as_loading_after_the_extraction(
    tmp_path: Path, loaders: list[early.EarlyLoad]
) -> None:
    """Night 2 (other ids: night 1's are gone; invoices fetched one by one) loaded while
    extracting into one copy of night 1, and after extracting into another: same rows."""
    with sandbox(seed=21, payments=3000) as url:
        first = overrides_for(tmp_path / "a", url)
        assert steps.run_local(first).status == "complete"
    early_db = Path(first["db"])
    after_db = tmp_path / "b" / "recon.duckdb"
    after_db.parent.mkdir(parents=True)
    shutil.copy(early_db, after_db)
    loaders.clear()
    with sandbox(seed=22, payments=4000, invoices_list=False) as url:
        second = {**first, "base_url": url}
        run_id = _extract_and_load(second, load_early=True)
    (loader,) = loaders
    assert loader.failed is None
    assert "payments" in loader.order
    assert len(loader.order) >= 5
    steps.load_step({**second, "db": str(after_db)}, run_id, publish=True)  # after extracting

    with_early, after = _tables(early_db), _tables(after_db)
    assert with_early.keys() == after.keys()
    for table in after:
        assert with_early[table] == after[table], table
    assert len(after["record_versions"]) > 7000
    assert not early_db.with_name(".recon.duckdb.work").exists()
    assert not early_db.with_name(".recon.duckdb.lock").exists()


def test_a_short_list_is_loaded_while_payments_are_still_paged(
    tmp_path: Path, loaders: list[early.EarlyLoad], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, bool]] = []  # each resource loaded early; payments done by then?
    limits: dict[str, int] = {}  # DuckDB's memory limit as each was loaded
    committed: list[tuple[str, bool]] = []  # each resource loaded early: committed at once?
    real = early.EarlyLoad._load

    def load(self: early.EarlyLoad, resource: str) -> None:
        state = self.landing.folder / "payments" / "state.json"
        done = state.exists() and bool(json.loads(state.read_bytes()).get("done"))
        seen.append((resource, done))
        assert self.con is not None
        row = self.con.execute("SELECT current_setting('memory_limit')").fetchone()
        limits[resource] = parse_size(str(row[0] if row else "")) or 0
        real(self, resource)
        # committed on its own, now: another connection to the working copy sees it
        other = self.con.cursor()
        scans = other.execute(
            "SELECT count(*) FROM resource_scans WHERE run_id = ? AND resource = ?",
            [self.landing.run_id, resource],
        ).fetchone()
        committed.append((resource, bool(scans and scans[0])))
        other.close()

    monkeypatch.setattr(early.EarlyLoad, "_load", load)
    with sandbox(seed=5, payments=20_000, latency_ms=2) as url:
        summary = steps.run_local(overrides_for(tmp_path, url))
    assert summary.status == "complete"
    assert loaders[0].failed is None
    before = [r for r, payments_done in seen if not payments_done]
    assert before, seen  # loaded while payments were still being paged
    assert "payments" not in before
    assert ("payments", True) in seen  # payments too, once their list ended
    assert committed == [(r, True) for r, _ in seen]
    # a share of the memory limit beside the extraction; the last list: the whole limit
    whole = parse_size(duckdb_config(None)["memory_limit"])  # type: ignore[arg-type]
    assert limits[before[0]] == int(whole * early.EARLY_MEMORY_SHARE) // 2**20 * 2**20
    assert limits[seen[-1][0]] == whole


def test_a_first_night_makes_the_readers_objects_while_extracting_not_in_its_checks(
    tmp_path: Path, loaders: list[early.EarlyLoad], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The views the checks read are made by the early load once a list is loaded and none
    waits, beside the paging; the checks find them current and make nothing; the publish
    makes them again (DuckDB 1.1)."""
    made: list[str] = []  # the thread that made them, each time
    real = published.create_views

    def counted(con: duckdb.DuckDBPyConnection) -> None:
        made.append(threading.current_thread().name)
        real(con)

    monkeypatch.setattr(published, "create_views", counted)
    ran_checks: list[str] = []
    real_checks = steps.LocalSteps.check

    def check(self: steps.LocalSteps, *args: Any, **kwargs: Any) -> Any:
        ran_checks.append(f"after {len(made)}")
        return real_checks(self, *args, **kwargs)

    monkeypatch.setattr(steps.LocalSteps, "check", check)
    with sandbox(seed=8, payments=20_000, latency_ms=25) as url:  # the loader waits on payments
        summary = steps.run_local(overrides_for(tmp_path, url))
    assert summary.status == "complete"
    assert loaders[0].failed is None
    assert loaders[0].order[-1] == "payments"
    assert ran_checks == ["after 1"]  # made once before the checks: by the early load
    assert made == ["recon-early-load", threading.current_thread().name]  # then the publish


def test_a_duckdb_error_while_loading_early_falls_back_to_the_whole_load(
    tmp_path: Path, loaders: list[early.EarlyLoad], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = early.load_resource
    calls: list[str] = []

    def failing(con: Any, landing: Any, resource: str, *args: Any) -> Any:
        calls.append(resource)
        if len(calls) == 2:
            con.execute("SELECT * FROM read_parquet('/nonexistent/forced.parquet')")
        return real(con, landing, resource, *args)

    monkeypatch.setattr(early, "load_resource", failing)
    with sandbox(seed=21, payments=3000) as url:
        reference = overrides_for(tmp_path / "ref", url)
        monkeypatch.setenv("RECON_EARLY_LOAD", "0")
        assert steps.run_local(reference).status == "complete"
        assert loaders == []  # switched off: none started
        monkeypatch.delenv("RECON_EARLY_LOAD")
        over = overrides_for(tmp_path / "forced", url)
        summary = steps.run_local(over)
    assert summary.status == "complete"
    (loader,) = loaders
    assert loader.failed is not None
    assert "IOException" in loader.failed
    assert len(calls) == 2  # it stopped at the error
    assert _content(Path(over["db"])) == _content(Path(reference["db"]))
    assert _tables(Path(over["db"]))["resource_scans"]  # loaded whole, after extracting


def test_an_extraction_that_raises_drops_what_was_loaded_early_and_its_resume_loads_after(
    tmp_path: Path, loaders: list[early.EarlyLoad], monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.night import steps as step_module

    real = step_module.extract_all

    def stopped(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)
        raise StoppedError("stopped")

    monkeypatch.setattr(step_module, "extract_all", stopped)
    with sandbox(seed=21, payments=1500) as url:
        over = overrides_for(tmp_path, url)
        run_id = steps.start_step(over, probe_api=False)
        with pytest.raises(StoppedError):
            steps.extract_step(over, run_id, load_early=True)
    (loader,) = loaders
    assert loader.failed == "abandoned"
    assert loader.con is None
    db = Path(over["db"])
    assert not db.exists()  # nothing published
    assert not db.with_name(".recon.duckdb.work").exists()
    assert not db.with_name(".recon.duckdb.lock").exists()
    assert early.adopt(db, run_id) is None  # the load step would load the run afresh

    monkeypatch.setattr(step_module, "extract_all", real)
    with sandbox(seed=21, payments=1500) as url:  # the same data: the run is resumed
        steps.extract_step({**over, "base_url": url}, run_id, load_early=True)
        assert len(loaders) == 1  # a resumed run loads after its extraction, as before
        result = steps.load_step({**over, "base_url": url}, run_id, publish=True)
    assert result.status == "complete"
    assert not db.with_name(".recon.duckdb.lock").exists()
