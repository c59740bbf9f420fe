"""A cancel in Prefect stops the night itself (issue 37, point 3; pipelines.cancel): the flow
sees its run CANCELLING, the scans land what they hold, no further step starts, and the flow
returns Cancelled naming `recon nightly --resume RUN_ID`. Before, nothing in the flow looked:
a night cancelled from the UI paged on to the end unless a worker killed its process.
(Through a real server and process worker: tests/night/test_deployment.py.)"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipelines.cancel import Stop, stop_on_cancel
from recon.night.extract import STOPPING, StoppedError

from .conftest import overrides_for, sandbox


class _Steps:
    def __init__(self) -> None:
        self.called: list[str] = []
        self.label = "steps"

    def load(self, run_id: str) -> str:
        self.called.append(f"load {run_id}")
        return "loaded"


def test_a_night_asked_to_stop_starts_no_further_step() -> None:
    steps = _Steps()
    stop = Stop({}, None, owns_process=False, logger=logging.getLogger("test"))
    checked = stop.steps(steps)
    assert checked.load("r1") == "loaded"
    assert checked.label == "steps"
    STOPPING.clear()
    stop.ask("cancelled in Prefect")
    assert STOPPING.is_set()  # the scans stop after their page
    with pytest.raises(StoppedError, match="cancelled in Prefect"):
        checked.load("r2")
    assert steps.called == ["load r1"]
    STOPPING.clear()


def test_outside_a_flow_run_nothing_is_watched_and_sigterm_is_left_alone() -> None:
    before = signal.getsignal(signal.SIGTERM)
    threads = threading.active_count()
    with stop_on_cancel({}) as stop:
        assert signal.getsignal(signal.SIGTERM) is before
        assert threading.active_count() == threads  # no watcher without a flow run
        assert not stop.owns_process
    assert signal.getsignal(signal.SIGTERM) is before


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


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.xdist_group("prefect")
def test_a_flow_run_cancelled_in_prefect_stops_its_night_and_says_how_to_resume(
    prefect_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState
    from prefect.client.schemas.filters import FlowRunFilterStateType as Types
    from prefect.client.schemas.objects import StateType
    from prefect.states import State

    from pipelines.nightly import nightly

    monkeypatch.setenv("RECON_CONCURRENCY", "1")
    monkeypatch.setenv("RECON_PAGE_SIZE", "50")
    monkeypatch.setenv("RECON_LANDING_BATCH_RECORDS", "2000")
    ended: dict[str, Any] = {}
    with sandbox(seed=13, payments=20000, latency_ms=20) as url:
        over = overrides_for(tmp_path, url)

        def night() -> None:  # off the main thread, as `recon nightly` runs its flow
            ended["state"] = nightly(overrides=over, return_state=True)
            ended["at"] = time.monotonic()

        runner = threading.Thread(target=night, daemon=True)
        runner.start()
        landing = tmp_path / "data" / "landing"
        deadline = time.monotonic() + 180
        while not list(landing.glob("*/payments/batch-*.parquet")):
            assert runner.is_alive(), ended
            assert time.monotonic() < deadline, "no batch landed in time"
            time.sleep(0.05)
        with get_client(sync_client=True) as client:
            running = FlowRunFilter(state=FlowRunFilterState(type=Types(any_=[StateType.RUNNING])))
            [run] = client.read_flow_runs(flow_run_filter=running)
            asked = time.monotonic()
            client.set_flow_run_state(run.id, State(type=StateType.CANCELLING), force=True)
        runner.join(timeout=60)
        assert not runner.is_alive(), "the night went on after its flow run was cancelled"
    print(f"cancelled: the flow returned {ended['at'] - asked:.1f} s after the request")
    state = ended["state"]
    assert state.is_cancelled(), state
    run_id = state.message.rsplit("--resume ", 1)[1].rstrip("`")
    assert (landing / run_id / "payments").is_dir()  # the landed pages are kept
    assert "cancelled in Prefect" in state.message
