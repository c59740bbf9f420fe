"""What a night was, as the final state of its flow run (docs/deployment.md).

Exit 0 is Completed; 3 is Failed named `Incomplete`; 4 (`--fail-on`) is Failed named
`Findings`; 1 and 2 are Failed; a night stopped on request (SIGINT, SIGTERM, a cancel in
Prefect: pipelines.cancel) is Cancelled.
The night's summary stays the state's result, so that `recon nightly` reads it back
(`summary_of`) and the shell gets the same exit code. An automation on the state type
FAILED thus fires for every night that is not complete (docs/deployment.md).
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from prefect import State
from prefect.states import Cancelled, Completed, Failed

from recon.errors import ReconError
from recon.night.extract import StoppedError
from recon.night.outcome import EXIT_COMPLETE, EXIT_FINDINGS, EXIT_INCOMPLETE

__all__ = ["FINDINGS", "INCOMPLETE", "night_state", "summary_of"]

INCOMPLETE = "Incomplete"
FINDINGS = "Findings"

_NAMES = {EXIT_INCOMPLETE: INCOMPLETE, EXIT_FINDINGS: FINDINGS}


class NightNotComplete(ReconError):
    """A night that ended but is not complete: a Failed state's data, carrying the summary.

    Prefect wants an exception as a failed state's data (it raises it where the flow's
    result is asked for: a deployed run's process, a plain `nightly(...)` call); any other
    value was a `TypeError` there ("RunSummary cannot be resolved into an exception").
    """

    def __init__(self, message: str, summary: Any) -> None:
        super().__init__(message)
        self.summary = summary

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.summary))


class _Night(Protocol):
    @property
    def exit_code(self) -> int: ...

    @property
    def status(self) -> str: ...


N = TypeVar("N", bound=_Night)


def night_state(summary: N, *, label: str) -> State[Any]:
    """The flow run's final state for a night that ended with `summary` (`label`, e.g.
    "run ID", begins the state's message)."""
    code = int(summary.exit_code)
    message = f"recon {label}: {summary.status} (exit {code})"
    reason = getattr(summary, "reason", None)
    if reason:
        message += f": {reason}"
    if code == EXIT_COMPLETE:
        return Completed(message=message, data=summary)
    ended = NightNotComplete(message, summary)
    return Failed(name=_NAMES.get(code, "Failed"), message=message, data=ended)


def stopped_state(exc: StoppedError, run_id: str | None = None) -> State[Any]:
    """A night stopped on request: Cancelled, never Crashed; its landed pages are kept, and
    the message says how to go on from them when the run is known."""
    message = f"recon: stopped on request ({exc}); its landed pages are kept"
    if run_id:
        message += f": go on with `recon nightly --resume {run_id}`"
    # A StoppedError as its data: what a deployed run's engine raises for a Cancelled state,
    # which pipelines.lines keeps out of the log (its line is said once, pipelines.cancel)
    return Cancelled(message=message, data=StoppedError(message))


def summary_of(state: State[Any]) -> Any:
    """The night's summary a flow run returned, whatever its state; an exception the flow
    raised (a refused key before the first page, a bad setting) is raised again here, and
    a night stopped on request is a StoppedError."""
    if state.is_cancelled():
        raise StoppedError(state.message or "stopped on request")
    value = state.result(raise_on_failure=False)
    if isinstance(value, NightNotComplete):
        return value.summary
    if isinstance(value, BaseException):
        raise value
    return value
