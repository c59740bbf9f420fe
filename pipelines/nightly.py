"""The nightly Prefect flow: extract → load → check → publish → report.

Every task is a one-line call into `recon.night.nightly`, which knows nothing of Prefect. Flow
parameters carry only non-secret overrides (paths, base URL); the API key and token are
read from the environment inside the tasks, so Prefect never stores them.
"""

from __future__ import annotations

from prefect import State, flow, get_run_logger, task, unmapped
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from pipelines.cancel import stop_on_cancel
from pipelines.lines import one_line_for_recon_errors
from pipelines.states import night_state
from recon.night import nightly as steps
from recon.night import progress
from recon.night.extract import ResourceOutcome, StoppedError, resources_for
from recon.warehouse.working_copy import LoadResult

one_line_for_recon_errors()  # also in a deployed run's own process

Overrides = steps.Overrides  # non-secret settings only (Prefect stores parameters)


@task(name="start", cache_policy=NO_CACHE, persist_result=False)
def start(overrides: Overrides, resume: str | None, trigger: str) -> str:
    return steps.start_step(overrides, resume=resume, trigger=trigger)


@task(name="retry-start", cache_policy=NO_CACHE, persist_result=False)
def retry_start(overrides: Overrides, retry: str) -> str:
    return steps.retry_start_step(overrides, retry)


@task(name="refetch-failed", cache_policy=NO_CACHE, persist_result=False)
def refetch(overrides: Overrides, run_id: str) -> list[str]:
    return steps.refetch_step(overrides, run_id)


@task(name="reload", cache_policy=NO_CACHE, persist_result=False)
def reload(overrides: Overrides, run_id: str) -> str:
    return steps.reload_step(overrides, run_id)


@task(name="notify", cache_policy=NO_CACHE, persist_result=False)
def notify(overrides: Overrides, summary: steps.RunSummary) -> str | None:
    return steps.notify_step(overrides, summary)


@task(name="extract", cache_policy=NO_CACHE, persist_result=False)
def extract(overrides: Overrides, run_id: str, payment_methods: bool) -> list[ResourceOutcome]:
    return steps.extract_step(
        overrides,
        run_id,
        progress=progress.current(),
        payment_methods=payment_methods,
        load_early=True,  # the load task follows in this process
    )


@task(name="extract-resource", cache_policy=NO_CACHE, persist_result=False)
def extract_resource(overrides: Overrides, run_id: str, resource: str) -> ResourceOutcome:
    return steps.extract_one_step(overrides, run_id, resource)


@task(name="load", cache_policy=NO_CACHE, persist_result=False)
def load(overrides: Overrides, run_id: str) -> LoadResult:
    return steps.load_step(overrides, run_id, publish=False)


@task(name="check", cache_policy=NO_CACHE, persist_result=False)
def check(overrides: Overrides, run_id: str) -> int:
    return len(steps.check_step(overrides, run_id, publish=False, fresh=False))


@task(name="publish", cache_policy=NO_CACHE, persist_result=False)
def publish(overrides: Overrides, run_id: str) -> str:
    return str(steps.publish_step(overrides, run_id))


@task(name="report", cache_policy=NO_CACHE, persist_result=False)
def report(overrides: Overrides, run_id: str, fail_on: str | None) -> steps.RunSummary:
    return steps.report_step(overrides, run_id, fail_on=fail_on)


class FlowSteps:
    """The night's steps as this flow's tasks, in the order `nightly.run_night` keeps."""

    def __init__(self, *, distributed: bool) -> None:
        self.distributed = distributed

    def start(self, overrides: Overrides, resume: str | None, trigger: str) -> str:
        return start(overrides, resume, trigger)

    def extract(
        self, overrides: Overrides, run_id: str, payment_methods: bool
    ) -> list[ResourceOutcome]:
        if self.distributed:  # one task per resource, spread over the task runner's workers
            names = resources_for(steps.settings_for(overrides), payment_methods=payment_methods)
            futures = extract_resource.map(unmapped(overrides), unmapped(run_id), names)
            return [f.result() for f in futures]
        # one task, resources on local threads sharing one rate limiter
        return extract(overrides, run_id, payment_methods)

    def load(self, overrides: Overrides, run_id: str) -> LoadResult:
        return load(overrides, run_id)

    def check(self, overrides: Overrides, run_id: str) -> int:
        return check(overrides, run_id)

    def publish(self, overrides: Overrides, run_id: str) -> str:
        return publish(overrides, run_id)

    def report(self, overrides: Overrides, run_id: str, fail_on: str | None) -> steps.RunSummary:
        return report(overrides, run_id, fail_on)

    def notify(self, overrides: Overrides, summary: steps.RunSummary) -> str | None:
        return notify(overrides, summary)

    def retry_start(self, overrides: Overrides, retry: str) -> str:
        return retry_start(overrides, retry)

    def refetch(self, overrides: Overrides, run_id: str) -> list[str]:
        return refetch(overrides, run_id)

    def reload(self, overrides: Overrides, run_id: str) -> str:
        return reload(overrides, run_id)

    def reported(self, summary: steps.RunSummary, outcomes: list[ResourceOutcome]) -> None:
        _artifacts(summary, outcomes)


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
