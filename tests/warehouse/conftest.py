"""Helpers that land synthetic runs, so the warehouse is tested without HTTP."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from recon.paging.records import RawRecords
from recon.runid import new_run_id
from recon.warehouse.landing import RunLanding
from recon.warehouse.working_copy import LoadResult, Warehouse, load_run

LandNight = Callable[..., tuple[str, LoadResult]]


@pytest.fixture
def land_night(tmp_path: Path) -> LandNight:
    """Land `records` per resource as one run and load it into tmp_path/wh.duckdb."""
    db = tmp_path / "wh.duckdb"

    def night(
        records: Mapping[str, Sequence[Any]],
        *,
        status: Mapping[str, str] | None = None,
        calls: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    ) -> tuple[str, LoadResult]:
        run_id = new_run_id()
        landing = RunLanding(tmp_path / "landing", run_id)
        landing.create({"started_at": "2026-11-21T02:00:00+00:00", "trigger": "test"})
        for resource, recs in records.items():
            rl = landing.resource(resource)
            page = recs if isinstance(recs, RawRecords) else list(recs)  # as sent, or parsed
            rl.add_page(offset=0, next_offset=None, records=page, request_id="req_page")
            rl.finish(
                status=(status or {}).get(resource, "complete"),
                reason=None,
                calls=list((calls or {}).get(resource, [])),
            )
        with Warehouse(db).session(run_id, fresh=True, publish=True) as con:
            return run_id, load_run(con, landing)

    return night
