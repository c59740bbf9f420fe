"""`PrefectOrchestrator`: the nightly flow on a Prefect server, in Prefect's local mode.

With no `PREFECT_API_URL`, a session starts recon's own local Prefect server (see
`server.py`), so nothing has to be started by hand; the flow then runs on local threads or
on a Dask cluster through `prefect-dask`.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipelines.lines import one_line_for_recon_errors
from recon.config.schedule import Plan
from recon.orchestrator import NightlyOptions, Say

if TYPE_CHECKING:
    from pipelines.server import LocalServer
    from recon.accounts.night import GroupSummary
    from recon.night.nightly import RunSummary

__all__ = ["PrefectOrchestrator"]

# Prefect's local mode: no analytics calls, and room for a cold start (docs/facts.md "Prefect").
PREFECT_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "DO_NOT_TRACK": "1",  # Prefect's client telemetry: a reconciliation job does not phone home
}


class PrefectOrchestrator:
    """Runs `pipelines.nightly` on a Prefect server (the configured one, or its own)."""

    def __init__(self) -> None:
        self._server: LocalServer | None = None

    @contextlib.contextmanager
    def session(self, say: Say) -> Iterator[str]:
        """A Prefect server for this process: started here and not waited for, so that the
        caller's own checks run while it boots; the first run waits until it answers."""
        for key, value in PREFECT_DEFAULTS.items():
            os.environ.setdefault(key, value)
        from pipelines.server import starting_prefect_server

        one_line_for_recon_errors()
        with starting_prefect_server(say) as server:
            self._server = server
            try:
                yield server.api_url
            finally:
                self._server = None

    def _ready(self) -> contextlib.AbstractContextManager[Any]:
        """Prefect imported and its server answering (inside a `session`); the settings a
        flow runs under. recon's own server runs no services, so nothing reads a flow run's
        heartbeats there: they are off (the heartbeat thread sleeps in 1 s steps, and
        joining it held each night's end by up to a second)."""
        if self._server is None:
            return contextlib.nullcontext()
        self._server.ready()
        if not self._server.own:
            return contextlib.nullcontext()
        from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

        return temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})

    def run_nightly(self, overrides: Mapping[str, Any], options: NightlyOptions) -> RunSummary:
        """Run the nightly flow once (inside a `session`)."""
        with self._ready():
            from pipelines.nightly import nightly as flow

            params = dict(overrides)
            if options.task_runner == "dask":
                flow = flow.with_options(task_runner=_dask_runner(params, options.dask_address))
            state = _off_the_main_thread(
                flow,
                overrides=params,
                resume=options.resume,
                trigger=options.trigger,
                fail_on=options.fail_on,
                payment_methods=options.payment_methods,
                distributed=options.task_runner == "dask",
                retry_failed=options.retry_failed,
                return_state=True,
            )
        from pipelines.states import summary_of

        summary: RunSummary = summary_of(state)
        return summary

    def run_group(
        self,
        overrides: Mapping[str, Any],
        accounts: Sequence[str],
        night_id: str,
        options: NightlyOptions,
    ) -> GroupSummary:
        """Every account's night side by side (inside a `session`): a task per account."""
        with self._ready():
            from pipelines.group import group_nightly as flow

            params = dict(overrides)
            if options.task_runner == "dask":  # accounts wait on their providers: threads each
                threads = max(1, -(-len(accounts) // 2))
                runner = _dask_runner(params, options.dask_address, threads_per_worker=threads)
                flow = flow.with_options(task_runner=runner)
            state = _off_the_main_thread(
                flow,
                overrides=params,
                accounts=list(accounts),
                night_id=night_id,
                resume=options.resume is not None,
                trigger=options.trigger,
                fail_on=options.fail_on,
                payment_methods=options.payment_methods,
                retry_failed=options.retry_failed is not None,
                return_state=True,
            )
        from pipelines.states import summary_of

        summary: GroupSummary = summary_of(state)
        return summary

    def serve_schedule(self, plan: Plan, say: Say) -> None:
        """Serve the nightly flow on `plan` (a standing server: it needs the scheduler)."""
        for key, value in PREFECT_DEFAULTS.items():
            os.environ.setdefault(key, value)
        from pipelines.serve import serve

        serve(plan, say=say)


def _off_the_main_thread(flow: Any, **params: Any) -> Any:
    """Call the flow on a thread of its own and wait for it. Prefect then installs no SIGTERM
    bridge (a signal handler needs the main thread), so SIGINT and SIGTERM reach recon's own
    handlers (`recon.cli.run`), which ask the night to stop, and never raise inside Prefect's
    engine (which would report a crash and try to tell a server that may be gone)."""
    context = contextvars.copy_context()  # the progress display, Prefect's settings
    outcome: list[Any] = []
    failure: list[BaseException] = []

    def call() -> None:
        try:
            outcome.append(context.run(flow, **params))
        except BaseException as exc:  # handed to the caller's thread as it is
            failure.append(exc)

    thread = threading.Thread(target=call, name="recon-flow", daemon=True)
    thread.start()
    while thread.is_alive():  # a signal's handler runs on this thread, between waits: a
        thread.join(0.1)  # signal the kernel gave another thread would wait for the join
    if failure:
        raise failure[0]
    return outcome[0]


def _dask_runner(
    overrides: dict[str, Any], address: str | None, *, threads_per_worker: int = 1
) -> Any:
    """A DaskTaskRunner whose workers see shared paths (and the run's Prefect server)."""
    from prefect_dask.task_runners import DaskTaskRunner

    from recon.night.nightly import settings_for

    # Workers are other processes (other machines, on a real cluster): they need absolute
    # paths, and the Prefect server the run uses (PREFECT_API_URL, set before they start).
    settings = settings_for(overrides)
    for key in ("db", "landing", "reports"):
        overrides[key] = str(Path(getattr(settings, key)).resolve())
    if address:
        return DaskTaskRunner(address=address)
    return DaskTaskRunner(
        cluster_kwargs={
            "n_workers": 2,
            "threads_per_worker": threads_per_worker,
            "processes": True,
        }
    )
