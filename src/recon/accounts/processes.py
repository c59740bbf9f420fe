"""Each account's night in a process of its own, so that accounts use every core.

On threads in one process the accounts share one interpreter lock: their paging, parsing
and landing take turns however many cores the machine has. When a night has more than one
account and the machine at least `MIN_CORES` cores, `AccountProcesses.run` runs an account's whole
night (`recon.accounts.night.run_account`) in a child process instead, and hands back its
`AccountOutcome` as if it had run here:

- children come from a fork server that has imported recon, DuckDB, Polars and httpx once
  (`forkserver` with preloaded modules; `spawn` where there is no fork server), so a child
  starts in milliseconds without paying the imports again, and nothing of this process's
  threads or open warehouses is forked. The server is started as soon as a night knows its
  accounts (`start_fork_server`): `recon nightly` starts it before it loads Prefect, so
  that its imports (~0.6 s) run beside Prefect's start-up instead of before every
  account's first request;
- each child is given this process's environment (the accounts' keys stay in environment
  variables, sent over the child's pipe, never on a command line) and working folder;
- its log records and progress (`<account>/<resource>`) come back over a queue to this
  process's loggers and display;
- it dies with this process: a night killed with -9 leaves no account running on its own,
  and `--resume` finds every lock free;
- an account's process that ends abruptly (killed, out of memory) is that account's
  outcome, aborted, exit 1: the other accounts have processes of their own.

Where a child cannot be had or would not pay (fewer cores, one account, inside a daemonic
process such as a Dask worker), the account runs on the calling thread as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import logging.handlers
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from queue import Empty
from typing import TYPE_CHECKING, Any

from recon.night.outcome import EXIT_ABORTED
from recon.pids import pid_alive

if TYPE_CHECKING:
    from recon.accounts.outcome import AccountOutcome

__all__ = [
    "AccountProcesses",
    "cores",
    "run_account_apart",
    "start_fork_server",
    "worth_processes",
]

log = logging.getLogger("recon.accounts")

# What every account's night imports: loaded once in the fork server, not in each child.
PRELOAD = [
    "recon.accounts.night",
    "recon.config.accounts",
    "recon.night.nightly",
    "recon.night.extract",
    "recon.warehouse.working_copy",
    "recon.checks.runner",
    "recon.night.progress",
    "recon.report.render",
    "duckdb",
    "polars",
    "pyarrow.parquet",
    "httpx",
    "pytz",  # DuckDB's, for timestamps with a time zone
    "dateutil.relativedelta",
]


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


#: Accounts get processes of their own from this many cores. On two cores, four
#: accounts of 100k payments took 1.27-1.31x one alone in processes and 1.68x on threads,
#: which also cost more CPU (README, "How many accounts one machine holds").
MIN_CORES = 2


def worth_processes(accounts: int) -> bool:
    """More than one account, at least MIN_CORES cores, and a process allowed children."""
    return accounts > 1 and cores() >= MIN_CORES and not multiprocessing.current_process().daemon


def start_fork_server(accounts: int) -> bool:
    """Start the fork server now when `accounts` accounts will run in processes of their own
    (`worth_processes`); True if it was. Its imports (~0.6 s on a core of its own) then run
    beside what this process does before the first account starts (its own imports,
    Prefect's start-up) instead of before every account's first request: the accounts'
    processes fork from it at once. Called as soon as a night knows its accounts. Where
    there is no fork server (`spawn`), nothing is started: False."""
    if not _has_fork_server() or not worth_processes(accounts):
        return False
    _context()
    return True


def _has_fork_server() -> bool:
    return "forkserver" in multiprocessing.get_all_start_methods()


def _context() -> Any:
    if _has_fork_server():
        from multiprocessing import forkserver

        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        forkserver.ensure_running()  # its imports now, while this process checks the accounts
        return ctx
    return multiprocessing.get_context("spawn")


class _Relay:
    """The child's progress display: every event goes back to the parent over the queue."""

    def __init__(self, queue: Any) -> None:
        self.queue = queue

    def update(self, resource: str, **counts: Any) -> None:
        self.queue.put(("update", resource, counts))

    def done(self, resource: str, *, status: str) -> None:
        self.queue.put(("done", resource, status))


class _LogRelay(logging.handlers.QueueHandler):
    def enqueue(self, record: logging.LogRecord) -> None:
        self.queue.put_nowait(("log", record))


def _die_with(parent: int) -> None:
    """This child ends when `parent` (the process that started the night) does."""
    if sys.platform == "linux":  # at once: the kernel's signal when our parent process ends
        with contextlib.suppress(Exception):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    def watch() -> None:  # wherever that signal is not had, or our parent is a fork server
        while True:
            time.sleep(0.25)
            if not pid_alive(parent):
                os._exit(EXIT_ABORTED)

    threading.Thread(target=watch, name="recon-parent-watch", daemon=True).start()


def _child(
    night: Callable[..., AccountOutcome],
    name: str,
    kwargs: dict[str, Any],
    parent: int,
    environ: dict[str, str],
    queue: Any,
    levels: dict[str, int],
    shown: bool,
) -> None:
    """The child: its parent, environment, logs and display, then its account's night.

    The outcome is the last item it sends; then it leaves at once (`os._exit`, after its
    queue is flushed): nothing of a night's heap is worth tearing down piece by piece.
    """
    code = 0
    try:
        _die_with(parent)
        os.environ.clear()
        os.environ.update(environ)
        root = logging.getLogger()
        for handler in list(root.handlers):
            root.removeHandler(handler)
        root.addHandler(_LogRelay(queue))
        for logger, level in levels.items():
            logging.getLogger(logger or None).setLevel(level)
        if shown:
            from recon.night import progress

            progress.use(_Relay(queue))  # type: ignore[arg-type]
        outcome = night(kwargs.pop("overrides"), name, **kwargs)
        queue.put(("outcome", outcome))
    except BaseException as exc:  # run_account keeps Exceptions; this is e.g. a ^C
        code = EXIT_ABORTED
        with contextlib.suppress(BaseException):
            queue.put(("stopped", type(exc).__name__))
    finally:
        with contextlib.suppress(BaseException):
            queue.close()
            queue.join_thread()
        os._exit(code)


def _levels() -> dict[str, int]:
    """This process's logging levels (root's, and every logger's set one) for a child."""
    levels = {"": logging.getLogger().level}
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET:
            levels[name] = logger.level
    return levels


class AccountProcesses:
    """Runs accounts' nights in child processes, relaying their logs and progress here."""

    def __init__(self, night: Callable[..., AccountOutcome]) -> None:
        """`night`: `recon.accounts.night.run_account` (a module-level function: a child
        receives it by name)."""
        from recon.night import progress

        self._night = night
        self._ctx = _context()
        self._shown = progress.current()

    def _relay(self, item: tuple[Any, ...]) -> None:
        with contextlib.suppress(Exception):  # a display or handler never stops the night
            kind = item[0]
            if kind == "log":
                record = item[1]
                logger = logging.getLogger(record.name)
                if logger.isEnabledFor(record.levelno):
                    logger.handle(record)
            elif self._shown is not None and kind == "update":
                self._shown.update(item[1], **item[2])
            elif self._shown is not None and kind == "done":
                self._shown.done(item[1], status=item[2])

    def run(self, name: str, **kwargs: Any) -> AccountOutcome:
        """Account `name`'s night (`run_account(overrides, name, **kwargs)`) in a child."""
        from recon.accounts.outcome import AccountOutcome

        queue = self._ctx.Queue()  # one per account: a child killed mid-write stalls only it
        levels = _levels()
        shown = self._shown is not None
        args = (self._night, name, kwargs, os.getpid(), dict(os.environ), queue, levels, shown)
        proc = self._ctx.Process(target=_child, args=args, name=f"recon-account-{name}")
        proc.start()
        outcome: AccountOutcome | None = None
        stopped: str | None = None
        try:
            while outcome is None and stopped is None:
                try:
                    item = queue.get(timeout=0.5)
                except Empty:
                    if proc.exitcode is None:
                        continue
                    try:  # it has ended: what it sent before is still to be read
                        item = queue.get(timeout=0.5)
                    except Empty:
                        break
                if item[0] == "outcome":
                    outcome = item[1]
                elif item[0] == "stopped":
                    stopped = str(item[1])
                else:
                    self._relay(item)
        finally:
            if outcome is None:
                proc.join(timeout=5 if stopped else 0)
                if proc.exitcode is None:
                    proc.kill()  # this process is being stopped: so is the account
            proc.join()
            queue.close()
            queue.join_thread()
        if outcome is not None:
            return outcome
        if stopped:
            reason = f"stopped ({stopped})"
        else:
            reason = (
                f"its process ended (exit {proc.exitcode}) before its night did "
                "(killed, or out of memory)"
            )
        log.warning("account %s: %s", name, reason)
        return AccountOutcome(name, "aborted", EXIT_ABORTED, reason=reason)


def run_account_apart(
    night: Callable[..., AccountOutcome], overrides: Any, name: str, **kwargs: Any
) -> AccountOutcome:
    """`night(overrides, name, **kwargs)` (`recon.accounts.night.run_account`) in a child
    process when this process may have one, else here (in a daemonic process, e.g. a Dask
    worker, that runs it on the calling thread)."""
    if multiprocessing.current_process().daemon:
        return night(overrides, name, **kwargs)
    return AccountProcesses(night).run(name, overrides=overrides, **kwargs)
