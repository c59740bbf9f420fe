"""Prefect's run loggers, one line for recon's own errors: shared by the orchestrator and the
flows (`pipelines.nightly`, `pipelines.group`), which import it from here."""

from __future__ import annotations

import logging

__all__ = ["one_line_for_recon_errors"]


class _OneLineForReconErrors(logging.Filter):
    """Prefect logs a failed task or flow with its traceback; for recon's own errors (a full
    disk, a damaged file, a refused key: one line and an exit code, docs/design.md) the line
    without the traceback. Anything else keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        from recon.errors import ReconError
        from recon.night.extract import StoppedError

        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, StoppedError) or isinstance(
            getattr(exc, "__cause__", None), StoppedError
        ):
            return False  # a night stopped on request: `recon nightly` says so in one line
        if "StoppedError" in record.getMessage():  # the task's final state, logged without it
            return False
        if isinstance(exc, ReconError) or isinstance(getattr(exc, "__cause__", None), ReconError):
            record.exc_info = None
            record.exc_text = None
        return True


_ONE_LINE = _OneLineForReconErrors()
_PREFECT_RUN_LOGGERS = ("prefect.flow_runs", "prefect.task_runs")


def one_line_for_recon_errors() -> None:
    """Prefect's run loggers without tracebacks for recon's own errors (idempotent): in the
    CLI's session and in a deployed flow run's process (where Prefect logs the exception a
    failed flow ends with, `NightNotComplete` for a night that is not complete)."""
    for name in _PREFECT_RUN_LOGGERS:
        logging.getLogger(name).addFilter(_ONE_LINE)
