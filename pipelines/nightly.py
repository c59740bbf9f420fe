"""The nightly Prefect flow: extract → load → check → publish → report.

Every task is a step of `recon.night.table` (a call into `recon.night.steps`, which knows
nothing of Prefect), made the Prefect task of its name in one loop (`TASKS`); `FlowSteps` runs
them in the order `recon.night.nightly` keeps. Flow parameters carry only non-secret
overrides (paths, base URL); the API key and token are read from the environment inside the
tasks, so Prefect never stores them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar, cast

from prefect import State, Task, flow, get_run_logger, task, unmapped
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from pipelines.cancel import stop_on_cancel
from pipelines.lines import one_line_for_recon_errors
from pipelines.states import night_state
from recon.night import nightly as steps
from recon.night.extract import ResourceOutcome, StoppedError, resources_for
from recon.night.table import STEPS, Steps

one_line_for_recon_errors()  # also in a deployed run's own process

Overrides = steps.Overrides  # non-secret settings only (Prefect stores parameters)

P = ParamSpec("P")
R = TypeVar("R")

_IN_A_TASK = Steps()  # as a task runs them: the command's progress display, the network

TASKS: dict[str, Task[..., object]] = {
    method: task(name=name, cache_policy=NO_CACHE, persist_result=False)(
        getattr(_IN_A_TASK, method)
    )
    for method, name in STEPS.items()
}
"""Each step of `recon.night.table` as the Prefect task of its name, by its method's name."""


def task_of(step: Callable[P, R]) -> Task[P, R]:
    """The task of a step of the table (`task_of(Steps().load)` is the `load` task)."""
    return cast("Task[P, R]", TASKS[step.__name__])


class FlowSteps(Steps):
    """The night's steps as this flow's tasks, in the order `nightly.run_night` keeps. Each
    step of the table is its task here (`TASKS`, set on the class below); written out is only
    what a flow does otherwise: one task per resource on a Dask cluster, and the artifacts."""

    def __init__(self, *, distributed: bool) -> None:
        self.distributed = distributed

    def extract(
        self, overrides: Overrides, run_id: str, payment_methods: bool
    ) -> list[ResourceOutcome]:
        if self.distributed:  # one task per resource, spread over the task runner's workers
            names = resources_for(steps.settings_for(overrides), payment_methods=payment_methods)
            one = task_of(_IN_A_TASK.extract_resource)
            futures = one.map(unmapped(overrides), unmapped(run_id), names)
            return [f.result() for f in futures]
        # one task, resources on local threads sharing one rate limiter
        return task_of(_IN_A_TASK.extract)(overrides, run_id, payment_methods)

    def reported(self, summary: steps.RunSummary, outcomes: list[ResourceOutcome]) -> None:
        _artifacts(summary, outcomes)


for _method in STEPS.keys() - vars(FlowSteps).keys():  # every step not written out above
    setattr(FlowSteps, _method, staticmethod(TASKS[_method]))


@flow(name="recon-nightly", log_prints=False, validate_parameters=False)
def nightly(
    overrides: Overrides = None,
    resume: str | None = None,
    trigger: str = "cli",
    fail_on: str | None = None,
    payment_methods: bool = False,
    distributed: bool = False,
    retry_failed: str | None = None,
) -> State[steps.RunSummary]:
    """Reconcile the Merchant Payments API into the warehouse and write the reports.

    With `retry_failed` (a run id, or "latest": the newest incomplete run), finish that
    run instead: its failed pages fetched again, loaded into it, checked, re-published.
    The final state says what the night was (`pipelines.states`); its result is the summary.
    """
    with stop_on_cancel(overrides) as stop:  # a cancel in Prefect, SIGTERM (pipelines.cancel)
        tasks = stop.steps(FlowSteps(distributed=distributed))
        try:
            if retry_failed:
                summary = steps.retry_night(tasks, overrides, retry_failed, fail_on=fail_on)
            else:
                summary = steps.run_night(
                    tasks,
                    overrides,
                    resume=resume,
                    trigger=trigger,
                    fail_on=fail_on,
                    payment_methods=payment_methods,
                )
        except StoppedError as exc:  # stopped on request: the scans landed what they held
            return stop.stopped(exc)
    return night_state(summary, label=f"run {summary.run_id}")


def _artifacts(summary: steps.RunSummary, outcomes: list[ResourceOutcome]) -> None:
    logger = get_run_logger()
    logger.info("run %s: %s", summary.run_id, summary.status)
    md_path = (summary.report_dir / "report.md") if summary.report_dir else None
    markdown = md_path.read_text() if md_path and md_path.exists() else "\n".join(summary.lines)
    create_markdown_artifact(
        key="recon-summary", markdown=markdown, description=f"recon run {summary.run_id}"
    )
    table = [
        {
            "resource": o.resource,
            "status": o.status,
            "records": o.records,
            "failed_pages": o.failed_pages,
            "reason": o.reason or "",
        }
        for o in outcomes
    ]
    create_table_artifact(
        key="recon-resources", table=table, description="How complete each resource's scan was"
    )
    _failed_calls_artifact(summary)


def _failed_calls_artifact(summary: steps.RunSummary) -> None:
    from dataclasses import asdict

    from recon.report.data import failed_calls
    from recon.warehouse.database import open_readonly

    con = open_readonly(summary.db_path)
    try:
        rows = [asdict(call) for call in failed_calls(con, summary.run_id)]
    finally:
        con.close()
    for row in rows:
        row["request_ids"] = ", ".join(row["request_ids"])
    create_table_artifact(
        key="recon-failed-calls",
        table=rows,
        description="API calls that failed for good, with the request ids to quote",
    )
