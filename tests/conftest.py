"""Fixtures and hooks shared across test folders."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from recon.night import nightly as steps


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep `xdist_group` working under `--dist loadgroup` (`make test`): pytest-xdist 3.8
    marks a grouped test by setting `item._nodeid`, which pytest 9.2 no longer reads (a node's
    id is `item._id`), so every group was silently spread over the workers: the Prefect
    harness, the load run and the shared warehouse were built once per worker. This sets the
    `@group` suffix xdist's scheduler reads on the id pytest 9.2 uses."""
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import coerce_node_id
    except ImportError:  # an older pytest: xdist's own suffix works there
        return
    for item in items:
        names = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        if names and not item.nodeid.endswith("@" + "_".join(sorted(names))):
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(sorted(names))}")  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _recon_log_handlers_end_with_the_test() -> Iterator[None]:
    """A command run in-process (CliRunner) sets up recon's log handlers on the root logger
    (recon.logs.configure): removed after the test, so that no later test sees its lines."""
    root = logging.getLogger()
    level = root.level
    yield
    for handler in [h for h in root.handlers if getattr(h, "_recon", False)]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)


@pytest.fixture(scope="session")
def analyst_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real warehouse, built once per test process: two nights of `recon nightly` against
    the sandbox (seed 7, 600 payments, its books too), published as recon publishes it. Read
    only by its users (the analysts' tests, the README's): mark a module that uses it with
    `xdist_group("sandbox_warehouse")` so that `make test` builds it once, not per worker."""
    from recon.sandbox.app import SandboxConfig
    from recon.sandbox.ledger.files import sandbox_ledger
    from recon.sandbox.server import serve_in_thread

    root = tmp_path_factory.mktemp("analyst")
    mp = pytest.MonkeyPatch()
    for name in list(os.environ):
        if name.startswith("RECON_"):
            mp.delenv(name)
    mp.setenv("RECON_API_KEY", "sandbox-demo-key")
    overrides = {
        "db": str(root / "data" / "recon.duckdb"),
        "landing": str(root / "data" / "landing"),
        "reports": str(root / "reports"),
    }
    overrides.update(sandbox_ledger(7, 600, root / "data"))
    try:
        with serve_in_thread(SandboxConfig(seed=7, payments=600)) as url:
            steps.run_local({**overrides, "base_url": url})
            steps.run_local({**overrides, "base_url": url})  # a second night
    finally:
        mp.undo()
    return root / "data" / "recon.duckdb"
