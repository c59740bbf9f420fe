"""Fixtures and hooks shared across test folders."""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from recon.night import nightly as steps

TESTS = Path(__file__).parent
#: Fixtures made once per module (or class): every test using one runs on the same worker.
SHARED_SCOPES = frozenset({"package", "module", "class"})
#: Session fixtures read by tests in several folders, by the group their tests run in.
FIXTURE_GROUPS = {"analyst_db": "sandbox_warehouse"}


def _module_group(item: pytest.Item) -> str | None:
    """The test's module path when it uses a module- or class-scoped fixture of this test
    tree (a warehouse built for the module, a server, a browser), else None."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for fixturedefs in info.name2fixturedefs.values():
        fixturedef = fixturedefs[-1]
        if fixturedef.scope not in SHARED_SCOPES:
            continue
        source = inspect.getsourcefile(fixturedef.func)
        if source is not None and Path(source).resolve().is_relative_to(TESTS.resolve()):
            return str(item.path.relative_to(item.config.rootpath))
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep `xdist_group` working under `--dist loadgroup` (`make test`): pytest-xdist 3.8
    marks a grouped test by setting `item._nodeid`, which pytest 9.2 no longer reads (a node's
    id is `item._id`), so every group was silently spread over the workers: the Prefect
    harness, the load run and the shared warehouse were built once per worker. This sets the
    `@group` suffix xdist's scheduler reads on the id pytest 9.2 uses.

    A test with no `xdist_group` that uses `analyst_db` joins its group (`FIXTURE_GROUPS`),
    and one that uses a module-scoped fixture is grouped with its module: loadgroup hands
    ungrouped tests out one by one, so a module's tests were spread over the workers and its
    fixture (a warehouse of several nights, `recon serve`, Chromium) was made on each."""
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
        if not names:
            names = {FIXTURE_GROUPS[f] for f in item.fixturenames if f in FIXTURE_GROUPS}
        if not names and (module := _module_group(item)) is not None:
            names = {module}
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
    only by its users (the analysts' tests, the README's), which `make test` runs on one
    worker (`FIXTURE_GROUPS`) so that it is built once, not per worker."""
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
