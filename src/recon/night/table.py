"""The night's steps, each declared once: the name of its Prefect task, the plain function
it calls (`recon.night.steps`, `recon.night.start`) and how its arguments are bound.

`Steps` is that table. `recon.night.nightly` calls its steps in order (`run_night`,
`retry_night`); `LocalSteps` runs them in this process with a progress display and a test's
transport of its own; `pipelines.nightly` makes each step the Prefect task of its name and
calls those instead (`FlowSteps`). A step added here is a step of the flow too; what a flow
does otherwise (extracting one task per resource on a Dask cluster, its artifacts) is
written out there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx

from recon.night import progress as installed
from recon.night.extract import Progress, ResourceOutcome
from recon.night.outcome import RunSummary
from recon.night.start import retry_start_step, start_step
from recon.night.steps import (
    Overrides,
    check_step,
    extract_one_step,
    extract_step,
    load_step,
    notify_step,
    publish_step,
    refetch_step,
    reload_step,
    report_step,
)
from recon.warehouse.working_copy import LoadResult

__all__ = ["STEPS", "LocalSteps", "Steps", "step"]

Method = TypeVar("Method", bound=Callable[..., object])

_steps: dict[str, str] = {}
STEPS: Mapping[str, str] = _steps
"""Each step of `Steps` in the order declared: its method's name → its Prefect task's name."""


def step(name: str) -> Callable[[Method], Method]:
    """Declares a method of `Steps` a step of the night, run in a flow as the task `name`."""

    def declared(method: Method) -> Method:
        _steps[method.__name__] = name
        return method

    return declared


class Steps:
    """The night's steps. Called as they are, each step runs in this process, reporting to the
    progress display the running command installed and calling the API over the network (as
    a flow's task calls it); `LocalSteps` says which display and transport instead."""

    def display(self) -> Progress | None:
        """Where extraction reports its progress: the running command's display, if any."""
        return installed.current()

    def api_transport(self) -> httpx.BaseTransport | None:
        """The API's transport: None is the network, whose reachability is probed first."""
        return None

    @step("start")
    def start(self, overrides: Overrides, resume: str | None, trigger: str) -> str:
        probe_api = self.api_transport() is None  # a test's API in this process has no port
        return start_step(overrides, resume=resume, trigger=trigger, probe_api=probe_api)

    @step("extract")
    def extract(
        self, overrides: Overrides, run_id: str, payment_methods: bool
    ) -> list[ResourceOutcome]:
        return extract_step(
            overrides,
            run_id,
            progress=self.display(),
            payment_methods=payment_methods,
            transport=self.api_transport(),
            load_early=True,  # the load step follows in this process
        )

    @step("extract-resource")  # one resource: the unit a Dask worker runs (`pipelines.nightly`)
    def extract_resource(self, overrides: Overrides, run_id: str, resource: str) -> ResourceOutcome:
        return extract_one_step(overrides, run_id, resource)

    @step("load")
    def load(self, overrides: Overrides, run_id: str) -> LoadResult:
        return load_step(overrides, run_id, publish=False)

    @step("check")
    def check(self, overrides: Overrides, run_id: str) -> int:
        """How many checks ran (their results are in the working copy)."""
        return len(check_step(overrides, run_id, publish=False, fresh=False))

    @step("publish")
    def publish(self, overrides: Overrides, run_id: str) -> Path:
        return publish_step(overrides, run_id)

    @step("report")
    def report(self, overrides: Overrides, run_id: str, fail_on: str | None) -> RunSummary:
        return report_step(overrides, run_id, fail_on=fail_on)

    @step("notify")
    def notify(self, overrides: Overrides, summary: RunSummary) -> str | None:
        return notify_step(overrides, summary)

    @step("retry-start")
    def retry_start(self, overrides: Overrides, retry: str) -> str:
        return retry_start_step(overrides, retry, probe_api=self.api_transport() is None)

    @step("refetch-failed")
    def refetch(self, overrides: Overrides, run_id: str) -> list[str]:
        return refetch_step(overrides, run_id, transport=self.api_transport())

    @step("reload")
    def reload(self, overrides: Overrides, run_id: str) -> str:
        return reload_step(overrides, run_id)

    def reported(self, summary: RunSummary, outcomes: list[ResourceOutcome]) -> None:
        """After the report is written, before the alert (a flow publishes its artifacts)."""


@dataclass(frozen=True)
class LocalSteps(Steps):
    """The steps as plain calls in this process, without Prefect (tests, benchmarks, each
    account of a group night), with this display and this transport (None: the network)."""

    progress: Progress | None = None
    transport: httpx.BaseTransport | None = None

    def display(self) -> Progress | None:
        return self.progress

    def api_transport(self) -> httpx.BaseTransport | None:
        return self.transport
