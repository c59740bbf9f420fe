"""Fixtures of the workbench tests: a published warehouse with users, `recon serve` on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.workbench.support import Server, add_users, build_warehouse, serve


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("workbench") / "data" / "recon.duckdb"
    build_warehouse(path)
    add_users(path)
    return path


@pytest.fixture(scope="module")
def server(db: Path) -> Iterator[Server]:
    with serve(db, RECON_APPROVAL_THRESHOLD_MINOR="100000") as running:
        yield running
