"""Exit codes as flow-run states (pipelines.states), without a server: the mapping, the
summary read back from every state, and the exception a failed state carries."""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import pytest

from pipelines.states import NightNotComplete, night_state, stopped_state, summary_of
from recon.night.extract import StoppedError


@dataclass
class Night:
    run_id: str
    status: str
    exit_code: int
    reason: str | None = None


@pytest.mark.parametrize(
    ("status", "code", "kind", "name"),
    [
        ("complete", 0, "COMPLETED", "Completed"),
        ("incomplete", 3, "FAILED", "Incomplete"),
        ("complete", 4, "FAILED", "Findings"),
        ("failed", 1, "FAILED", "Failed"),
        ("failed", 2, "FAILED", "Failed"),
    ],
)
def test_each_exit_code_is_a_state_and_the_summary_comes_back(
    status: str, code: int, kind: str, name: str
) -> None:
    night = Night("20261129T020000Z-abcdef", status, code, reason="disputes incomplete")
    state = night_state(night, label=f"run {night.run_id}")
    assert (state.type.value, state.name) == (kind, name)
    assert state.message == f"recon run {night.run_id}: {status} (exit {code}): disputes incomplete"
    assert summary_of(state) is night


def test_a_failed_state_carries_an_exception_prefect_can_raise() -> None:
    """Prefect raises a failed state's data where the result is asked for (a deployed run's
    process): a RunSummary there was a TypeError ("cannot be resolved into an exception")."""
    night = Night("20261129T020000Z-abcdef", "incomplete", 3)
    state = night_state(night, label="run x")
    with pytest.raises(NightNotComplete, match="incomplete") as raised:
        state.result()
    assert raised.value.summary is night
    again = pickle.loads(pickle.dumps(raised.value))
    assert (str(again), again.summary) == (str(raised.value), night)


def test_a_stopped_night_is_cancelled_and_read_back_as_stopped() -> None:
    state = stopped_state(StoppedError("payments: stopped after 3 pages"))
    assert state.type.value == "CANCELLED"
    with pytest.raises(StoppedError, match="landed pages are kept"):
        summary_of(state)
