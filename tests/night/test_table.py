"""The night's steps declared once (recon.night.table): what the orchestrator calls, what runs
in this process and the flow's Prefect tasks are the same steps under the same names, and
each runner binds the steps' arguments as the night needs."""

from __future__ import annotations

import inspect
from typing import Any

import httpx
import pytest

from recon.night import table
from recon.night.extract import NullProgress
from recon.night.table import STEPS, LocalSteps, Steps

# The Prefect task names: the flow's runs, the docs and the Prefect UI show these.
TASK_NAMES = [
    "start",
    "extract",
    "extract-resource",
    "load",
    "check",
    "publish",
    "report",
    "notify",
    "retry-start",
    "refetch-failed",
    "reload",
]
HOOKS = {"display", "api_transport", "reported"}  # what a runner says, not steps


def _public_methods(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls, inspect.isfunction) if name[0] != "_"}


def test_the_table_names_each_task_once_in_the_nights_order() -> None:
    assert list(STEPS.values()) == TASK_NAMES


def test_every_method_of_steps_is_a_step_of_the_table_or_a_runners_hook() -> None:
    """A step written without its `@step` would run in this process but never as a task."""
    assert _public_methods(Steps) == set(STEPS) | HOOKS
    assert _public_methods(LocalSteps) == _public_methods(Steps)


def test_each_step_is_the_prefect_task_of_its_name_with_the_steps_signature() -> None:
    from prefect import Task

    from pipelines.nightly import TASKS, FlowSteps

    assert set(TASKS) == set(STEPS)
    written_out = {"extract", "reported", "__init__"}  # what a flow does otherwise
    for method, name in STEPS.items():
        made = TASKS[method]
        assert made.name == name
        assert inspect.signature(made.fn) == inspect.signature(getattr(Steps(), method))
        in_the_flow = inspect.getattr_static(FlowSteps, method)
        if method in written_out:
            assert inspect.isfunction(in_the_flow), method
        else:
            assert isinstance(in_the_flow, staticmethod), method
            assert in_the_flow.__func__ is made
            assert isinstance(getattr(FlowSteps(distributed=False), method), Task)
    assert {n for n, v in vars(FlowSteps).items() if inspect.isfunction(v)} == written_out


class _Calls:
    """Stands in for the plain functions: records how each was called."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: dict[str, dict[str, Any]] = {}
        for name in ("start_step", "extract_step", "retry_start_step", "refetch_step"):
            monkeypatch.setattr(table, name, self._recorder(name))

    def _recorder(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            self.seen[name] = kwargs
            return []

        return record


def test_a_flows_task_reports_to_the_installed_display_and_probes_the_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recon.night import progress

    calls = _Calls(monkeypatch)
    shown = NullProgress()
    monkeypatch.setattr(progress, "_current", shown)
    steps = Steps()
    steps.start(None, None, "cli")
    steps.extract(None, "run", True)
    steps.retry_start(None, "latest")
    steps.refetch(None, "run")
    assert calls.seen["start_step"] == {"resume": None, "trigger": "cli", "probe_api": True}
    assert calls.seen["extract_step"] == {
        "progress": shown,
        "payment_methods": True,
        "transport": None,
        "load_early": True,
    }
    assert calls.seen["retry_start_step"] == {"probe_api": True}
    assert calls.seen["refetch_step"] == {"transport": None}


def test_local_steps_use_their_own_display_and_a_tests_transport_without_a_probe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recon.night import progress

    calls = _Calls(monkeypatch)
    monkeypatch.setattr(progress, "_current", NullProgress())  # the command's: not this one's
    mine = NullProgress()
    transport = httpx.MockTransport(lambda request: httpx.Response(404))
    steps = LocalSteps(progress=mine, transport=transport)
    steps.start(None, "latest", "local")
    steps.extract(None, "run", False)
    steps.retry_start(None, "latest")
    steps.refetch(None, "run")
    assert calls.seen["start_step"] == {"resume": "latest", "trigger": "local", "probe_api": False}
    assert calls.seen["extract_step"]["progress"] is mine
    assert calls.seen["extract_step"]["transport"] is transport
    assert calls.seen["retry_start_step"] == {"probe_api": False}
    assert calls.seen["refetch_step"] == {"transport": transport}
    assert LocalSteps().display() is None  # none given: none, whatever the command shows
