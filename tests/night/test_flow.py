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


def test_the_flow_runs_final_state_says_what_the_night_was(
    prefect_home: Path, tmp_path: Path
) -> None:
    """Exit 3 is Failed named Incomplete, 4 Failed named Findings, 0 Completed (an
    automation on Failed fires for every night that is not complete); the summary stays the
    state's result. Before, every night that ended in recon's hands was Completed."""
    import httpx

    from pipelines.nightly import nightly
    from pipelines.states import summary_of

    with sandbox(seed=13, payments=700, poison=("disputes:3",)) as url:
        over = overrides_for(tmp_path, url)
        state = nightly(overrides=over, return_state=True)
        night = summary_of(state)
        assert (night.status, night.exit_code) == ("incomplete", 3)
        assert (state.type.value, state.name) == ("FAILED", "Incomplete")
        assert state.message is not None
        assert f"recon run {night.run_id}: incomplete (exit 3)" in state.message
        httpx.post(
            f"{url}/_sandbox/faults", json={"poison": []}, headers={"x-api-key": KEY}
        ).raise_for_status()
        done_state = nightly(overrides=over, retry_failed="latest", return_state=True)
        done = summary_of(done_state)
        assert (done_state.type.value, done_state.name) == ("COMPLETED", "Completed")
        found_state = nightly(overrides=over, fail_on="info", return_state=True)
        found = summary_of(found_state)
    assert (done.run_id, done.status, done.exit_code) == (night.run_id, "complete", 0)
    assert done.reason is not None
    assert done.reason.startswith("completed later by retry ")
    assert found.exit_code == 4  # the sandbox plants findings of every severity
    assert (found_state.type.value, found_state.name) == ("FAILED", "Findings")


def test_a_night_the_key_refuses_is_a_failed_flow_run_not_crashed(
    prefect_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.nightly import nightly

    monkeypatch.setenv("RECON_API_KEY", "not-the-key")
    with sandbox(seed=13, payments=50) as url:
        state = nightly(overrides=overrides_for(tmp_path, url), return_state=True)
    assert state.type.value == "FAILED"
    assert "not-the-key" not in (state.message or "")
