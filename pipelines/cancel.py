"""Cancelling a flow run in Prefect stops the night within seconds (docs/deployment.md).

Left to Prefect 3.9, a cancel goes: the worker (or `recon schedule`'s runner) hears of the
CANCELLING state on the server's event stream (or polls for it every 10 s while that stream
is down) and SIGTERMs the run's process; Prefect's SIGTERM bridge raises
`TerminationSignal` inside whatever step runs (the task "Crash detected!", a DuckDB query
interrupted with a traceback); and only once the worker has seen the process gone (it looks
every 3 s) and has loaded the flow again in a subprocess to look for `on_cancellation`
hooks does it mark the run Cancelled: 6-19 s from the request.

`stop_on_cancel` makes the night stop itself, as `recon nightly` does on SIGTERM:
- a thread reads the flow run's state every `POLL_S`; CANCELLING (or Cancelled) asks the
  night to stop; in a deployed run's own process, so does SIGTERM (instead of Prefect's
  bridge, which would raise inside the running step);
- asking sets recon's `STOPPING`: the scans land what they hold after their page, and no
  further step starts (`Stop.steps`); the flow returns Cancelled itself, its message and
  one log line naming `recon nightly --resume RUN_ID`;
- in a deployed run's process, a step still running `STOP_GRACE_S` after the request (a
  long query, a request in flight) is not waited for: the run is set Cancelled with the
  same line and the process ends, as `recon nightly` does after its grace.

Under `recon nightly` (the flow off the main thread, the CLI owning the signals) a cancel
seen by the thread is handed to the CLI as a SIGTERM of its own process: one line, exit 143.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, TypeVar, cast
from uuid import UUID

from prefect import State, get_client, get_run_logger
from prefect.context import FlowRunContext
from prefect.utilities.engine import is_prefect_sigterm_handler_installed

from pipelines.states import stopped_state
from recon.night.extract import STOPPING, StoppedError
from recon.night.steps import Overrides

__all__ = ["POLL_S", "STOP_GRACE_S", "Stop", "stop_on_cancel"]

#: How often the flow run's state is read: a cancel is seen within this.
POLL_S = 0.5
#: How long a stopped night may take to end by itself in a deployed run's process before
#: it is ended for it (`recon nightly`'s own grace is the same, recon.cli.run).
STOP_GRACE_S = 3.0

CANCELLED_IN_PREFECT = "cancelled in Prefect"

T = TypeVar("T")
log = logging.getLogger("recon.cancel")


class Stop:
    """A night's stop on request: asked once (a cancel seen, a SIGTERM), said once."""

    def __init__(
        self,
        overrides: Overrides,
        flow_run_id: UUID | None,
        *,
        owns_process: bool,
        logger: logging.Logger | logging.LoggerAdapter[logging.Logger],
    ) -> None:
        self.overrides = overrides
        self.flow_run_id = flow_run_id
        self.owns_process = owns_process  # a deployed run's process: its signals, its exit
        # off the main thread, as under `recon nightly`: the main thread's handler owns SIGTERM
        self.under_cli = threading.current_thread() is not threading.main_thread()
        self.logger = logger
        self.why: str | None = None  # set once a stop was asked for
        self._lock = threading.RLock()  # also taken by the SIGTERM handler, on this thread
        self._ended = False  # the flow ended (returned or raised): nothing more to do here
        self._said: State[Any] | None = None

    def ask(self, why: str) -> None:
        """Stop the night: the scans stop after their page, no further step starts; in a
        deployed run's process, what still runs `STOP_GRACE_S` later is not waited for."""
        STOPPING.set()
        with self._lock:
            if self.why is not None or self._ended:
                return
            self.why = why
        if self.owns_process:
            timer = threading.Timer(STOP_GRACE_S, self._end_now)
            timer.daemon = True
            timer.start()

    def check(self) -> None:
        """Between two steps: a night asked to stop starts no further step."""
        if self.why is not None:
            STOPPING.set()  # the extraction clears it when it starts
            raise StoppedError(self.why)

    def steps(self, steps: T) -> T:
        """`steps` (the flow's tasks), each call first checking that no stop was asked for."""
        return cast(T, _Checked(steps, self))

    def stopped(self, exc: StoppedError) -> State[Any]:
        """The flow's final state for a night that stopped on request, its line logged once."""
        with self._lock:
            if self._said is None:
                self._said = stopped_state(StoppedError(self.why or str(exc)), self._run_id())
                if self.owns_process:  # under `recon nightly`, the CLI says it
                    self.logger.warning(self._said.message)
            return self._said

    def _run_id(self) -> str | None:
        with contextlib.suppress(Exception):  # stopped before settings or a landing existed
            from recon.config.overrides import settings_for
            from recon.warehouse.landing import RunLanding

            return RunLanding.latest(settings_for(self.overrides).landing)
        return None

    def _end_now(self) -> None:
        """The grace is over and the night still runs: set the run Cancelled, say it, end."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
        state = self.stopped(StoppedError(self.why or CANCELLED_IN_PREFECT))
        # the server gone: the worker still ends the run once the process is
        with contextlib.suppress(Exception), get_client(sync_client=True) as client:
            client.set_flow_run_state(cast(UUID, self.flow_run_id), state, force=True)
        logging.shutdown()  # Prefect's API log handler sends what it holds
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    def end(self) -> None:
        with self._lock:
            self._ended = True

    def on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        self.ask(f"stopped by {signal.Signals(signum).name}")

    def watch(self, ended: threading.Event) -> None:
        """Read the flow run's state every `POLL_S` until `ended`; a cancel asks the stop."""
        try:
            with get_client(sync_client=True) as client:
                while not ended.wait(POLL_S):
                    if self.why is not None:
                        STOPPING.set()  # the extraction clears it when it starts
                    elif self._cancel_asked(client) and not ended.is_set():
                        self._cancelled()
        except Exception as exc:  # no client: the night runs on, stopped by signals only
            log.debug("not watching flow run %s for a cancel: %s", self.flow_run_id, exc)

    def _cancel_asked(self, client: Any) -> bool:
        try:
            state = client.read_flow_run(cast(UUID, self.flow_run_id)).state
        except Exception as exc:  # the server busy or restarting: look again
            log.debug("could not read flow run %s: %s", self.flow_run_id, exc)
            return False
        return state is not None and (state.is_cancelling() or state.is_cancelled())

    def _cancelled(self) -> None:
        if self.under_cli and _python_sigterm_handler():
            # `recon nightly`: its handler stops the night, says the line and exits 143
            os.kill(os.getpid(), signal.SIGTERM)
        self.ask(CANCELLED_IN_PREFECT)


class _Checked:
    """The flow's steps, each call first checking that the night was not asked to stop."""

    def __init__(self, steps: Any, stop: Stop) -> None:
        self._steps = steps
        self._stop = stop

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._steps, name)
        if not callable(attribute):
            return attribute
        step: Callable[..., Any] = attribute

        def checked(*args: Any, **kwargs: Any) -> Any:
            self._stop.check()
            return step(*args, **kwargs)

        return checked


def _python_sigterm_handler() -> bool:
    """Whether SIGTERM goes to a Python handler other than Prefect's bridge (the CLI's)."""
    try:
        handler = signal.getsignal(signal.SIGTERM)
    except ValueError:
        return False
    return callable(handler) and not is_prefect_sigterm_handler_installed()


@contextlib.contextmanager
def stop_on_cancel(overrides: Overrides) -> Iterator[Stop]:
    """Inside the nightly flow: a cancel in Prefect (and, in a deployed run's process,
    SIGTERM) stops the night as `recon nightly` stops on SIGTERM (the module's doc)."""
    context = FlowRunContext.get()
    flow_run = context.flow_run if context else None
    owns_process = (
        flow_run is not None
        and flow_run.deployment_id is not None  # started by a worker or a runner
        and threading.current_thread() is threading.main_thread()
    )
    stop = Stop(
        overrides,
        flow_run.id if flow_run else None,
        owns_process=owns_process,
        logger=get_run_logger() if flow_run else log,
    )
    previous = signal.signal(signal.SIGTERM, stop.on_sigterm) if owns_process else None
    ended = threading.Event()
    if flow_run is not None:
        context_now = contextvars.copy_context()  # Prefect's settings, as the flow has them
        watcher = threading.Thread(
            target=context_now.run,
            args=(stop.watch, ended),
            name="recon-cancel-watch",
            daemon=True,
        )
        watcher.start()
    try:
        yield stop
    finally:
        ended.set()
        stop.end()
        if owns_process and stop.why is None:
            # no stop asked: Prefect's bridge again; asked, ours stays (a late SIGTERM from
            # the worker then lands on it, not on the engine's teardown)
            signal.signal(signal.SIGTERM, previous)
