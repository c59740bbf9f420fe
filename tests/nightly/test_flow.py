"""The Prefect flow: thin tasks over recon.night.nightly, artifacts, no secret stored by Prefect."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import KEY, TOKEN, overrides_for, sandbox, webhook

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.xdist_group("prefect")]


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One temporary Prefect server (SQLite under a fresh PREFECT_HOME) for this module."""
    home = tmp_path_factory.mktemp("prefect-home")
    mp = pytest.MonkeyPatch()
    mp.setenv("PREFECT_HOME", str(home))
    mp.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    from prefect.settings import PREFECT_HOME, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with (
        temporary_settings({PREFECT_HOME: str(home)}),
        prefect_test_harness(server_startup_timeout=90),
    ):
        yield home
    mp.undo()


def test_flow_runs_every_step_and_keeps_secrets_out_of_prefect(
    prefect_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect.client.orchestration import get_client

    from pipelines.nightly import nightly

    with webhook(secret="T9/B9/hook-secret") as hook, sandbox(seed=13, payments=700) as url:
        monkeypatch.setenv("RECON_NOTIFY_URL", hook.url)
        summary = nightly(overrides=overrides_for(tmp_path, url))
    assert summary.status == "complete"
    assert len(hook.received) == 1  # the flow's alert
    assert hook.received[0]["text"].startswith(f"recon run {summary.run_id}: complete")
    assert summary.exit_code == 0
    assert (tmp_path / "reports" / summary.run_id / "summary.json").exists()

    async def artifacts() -> list[str]:
        async with get_client() as client:
            found = await client.read_artifacts()
            return [a.key for a in found if a.key]

    import asyncio

    keys = asyncio.run(artifacts())
    assert {"recon-summary", "recon-resources", "recon-failed-calls"} <= set(keys)

    # Prefect stores parameters, logs and artifacts in its database: no secret may be there.
    dbs = list(prefect_home.rglob("*.db"))
    for db in dbs:
        con = sqlite3.connect(db)
        try:
            tables = [
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            for table in tables:
                for row in con.execute(f'SELECT * FROM "{table}"'):
                    text = repr(row)
                    assert KEY not in text, table
                    assert TOKEN not in text, table
                    assert "hook-secret" not in text, table
        finally:
            con.close()


def test_the_flow_finishes_an_incomplete_night_with_retry_failed(
    prefect_home: Path, tmp_path: Path
) -> None:
    import httpx

    from pipelines.nightly import nightly

    with sandbox(seed=13, payments=700, poison=("disputes:3",)) as url:
        over = overrides_for(tmp_path, url)
        night = nightly(overrides=over)
        assert (night.status, night.exit_code) == ("incomplete", 3)
        httpx.post(
            f"{url}/_sandbox/faults", json={"poison": []}, headers={"x-api-key": KEY}
        ).raise_for_status()
        done = nightly(overrides=over, retry_failed="latest")
    assert (done.run_id, done.status, done.exit_code) == (night.run_id, "complete", 0)
    assert done.reason is not None
    assert done.reason.startswith("completed later by retry ")
