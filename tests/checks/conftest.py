from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from recon.runid import new_run_id
from recon.warehouse.landing import RunLanding
from recon.warehouse.working_copy import LoadResult, Warehouse, load_run

from .builder import Wh


@pytest.fixture
def wh(tmp_path: Path) -> Iterator[Wh]:
    """A fresh warehouse file with the real schema."""
    warehouse = Wh(tmp_path / "recon.duckdb")
    yield warehouse
    warehouse.close()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No RECON_* variables and no recon.toml: settings are their defaults."""
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


LandNight = Callable[..., tuple[str, LoadResult]]


@pytest.fixture
def land_night(tmp_path: Path) -> LandNight:
    """Land `records` per resource as one run (one page each), load it into
    tmp_path/wh.duckdb with the field mapping `fields`, and return (run_id, result)."""
    db = tmp_path / "wh.duckdb"

    def night(
        records: Mapping[str, Sequence[Any]],
        *,
        fields: Mapping[str, Mapping[str, str]] | None = None,
        started_at: str = "2026-11-20T02:00:00+00:00",
    ) -> tuple[str, LoadResult]:
        run_id = new_run_id()
        landing = RunLanding(tmp_path / "landing", run_id)
        landing.create({"started_at": started_at, "trigger": "test"})
        for resource, recs in records.items():
            rl = landing.resource(resource)
            rl.add_page(offset=0, next_offset=None, records=list(recs), request_id="req_page")
            rl.finish(status="complete", reason=None, calls=[])
        with Warehouse(db).session(run_id, fresh=True, publish=True) as con:
            if fields is None:
                return run_id, load_run(con, landing)
            return run_id, load_run(con, landing, fields=fields)

    return night
