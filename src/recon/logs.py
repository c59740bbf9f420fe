"""recon's log lines: text for people, or one JSON object a line for a log shipper.

- `RECON_LOG_FORMAT=text` (default) or `json`: each line an object with `time` (UTC,
  ISO 8601), `level`, `logger`, `run_id`, `account`, `step`, `resource`, `message` (and
  `error`, the exception's one line, when there is one; never a traceback).
- `RECON_LOG_FILE=PATH`: the same lines also appended to that file (stderr keeps them too).
- `RECON_LOG_LEVEL` (`--verbose`: DEBUG).

`run_id`, `account`, `step` and `resource` come from `context(...)`, which the night's steps
and each resource's extraction thread set; a line logged outside one says `null`. Every
message is `scrub`bed: no secret reaches a log line, in either format.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, ParamSpec, TypeVar

from recon.errors import ConfigError, scrub

__all__ = [
    "CONTEXT_FIELDS",
    "JsonFormatter",
    "LogChoice",
    "StderrHandler",
    "TextFormatter",
    "configure",
    "context",
    "current_context",
    "log_choice",
    "say_line",
    "step",
]

P = ParamSpec("P")
R = TypeVar("R")

CONTEXT_FIELDS = ("run_id", "account", "step", "resource")
_CONTEXT: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar(
    "recon_log_context", default=MappingProxyType({})
)
_TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Third-party loggers that would log every request (URLs with secrets in paths) or chatter.
_NOISY = ("httpx", "httpcore", "uvicorn", "uvicorn.access", "uvicorn.error", "distributed")


@contextlib.contextmanager
def context(**fields: str | None) -> Iterator[None]:
    """Log lines inside the block carry `fields` (run_id, account, step, resource)."""
    unknown = set(fields) - set(CONTEXT_FIELDS)
    if unknown:
        raise ValueError(f"unknown log context field(s): {', '.join(sorted(unknown))}")
    merged = dict(_CONTEXT.get())
    merged.update({k: v for k, v in fields.items() if v is not None})
    token = _CONTEXT.set(MappingProxyType(merged))
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def step(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A night's step `fn(overrides, run_id, …)`: its log lines carry the step, the run id and
    the account (the overrides' `account`)."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def logged(*args: P.args, **kwargs: P.kwargs) -> R:
            overrides = args[0] if args else kwargs.get("overrides")
            run_id = args[1] if len(args) > 1 else kwargs.get("run_id")
            account = overrides.get("account") if isinstance(overrides, Mapping) else None
            with context(
                step=name,
                run_id=run_id if isinstance(run_id, str) else None,
                account=account if isinstance(account, str) else None,
            ):
                return fn(*args, **kwargs)

        return logged

    return wrap


def current_context() -> dict[str, str]:
    """The fields log lines carry here (a copy)."""
    return dict(_CONTEXT.get())


def say_line(level: str, message: str, plain: str) -> None:
    """A line the command says to the operator (its one-line error, a warning): `plain` on
    stderr with text logs, the JSON object with json logs; also into RECON_LOG_FILE when
    the command set logging up with one (the morning's reason is in the file too)."""
    record = logging.LogRecord("recon", getattr(logging, level), "", 0, message, None, None)
    shown = False
    for handler in logging.getLogger().handlers:
        if not getattr(handler, "_recon", False):
            continue
        if isinstance(handler, StderrHandler):
            if isinstance(handler.formatter, JsonFormatter):
                handler.handle(record)
                shown = True
        else:
            handler.handle(record)
    if shown:
        return
    try:
        choice = log_choice()
    except ConfigError:
        choice = LogChoice("text", None, "INFO")
    line = JsonFormatter().format(record) if choice.format == "json" else plain
    print(line, file=sys.stderr, flush=True)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, run_id, account, step, resource, message."""

    def format(self, record: logging.LogRecord) -> str:
        fields = _CONTEXT.get()
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
        }
        for name in CONTEXT_FIELDS:  # `extra={"resource": …}` wins over the context
            line[name] = getattr(record, name, None) or fields.get(name)
        line["message"] = scrub(record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            line["error"] = scrub(f"{type(exc).__name__}: {exc}".splitlines()[0])
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """The plain line (`time LEVEL logger: message`), scrubbed like the JSON one."""

    def __init__(self) -> None:
        super().__init__(_TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler writing to whatever `sys.stderr` is when a line is logged (a test's
    capture, a redirected stream), not the one it was when the command began.

    Its name must not begin with `_`: Prefect's logging setup keeps the root logger's
    handlers only when one looks like the user's own (public class name, a formatter)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


LogFormat = Literal["text", "json"]


class LogChoice:
    """What the logging setup reads: format, file and level (from `RECON_LOG_*`)."""

    def __init__(self, fmt: LogFormat, file: Path | None, level: str) -> None:
        self.format = fmt
        self.file = file
        self.level = level


def log_choice(environ: dict[str, str] | None = None) -> LogChoice:
    """RECON_LOG_FORMAT, RECON_LOG_FILE and RECON_LOG_LEVEL, read before any other setting
    (a broken recon.toml must still log the way the operator asked): a bad value is a
    `ConfigError` naming it."""
    env = {k.upper(): v for k, v in (os.environ if environ is None else environ).items()}
    fmt = env.get("RECON_LOG_FORMAT", "text").strip().lower() or "text"
    if fmt not in ("text", "json"):
        raise ConfigError("RECON_LOG_FORMAT", "must be text or json")
    level = env.get("RECON_LOG_LEVEL", "INFO").strip().upper() or "INFO"
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise ConfigError("RECON_LOG_LEVEL", "must be DEBUG, INFO, WARNING or ERROR")
    raw = env.get("RECON_LOG_FILE", "").strip()
    return LogChoice("json" if fmt == "json" else "text", Path(raw) if raw else None, level)


def configure(verbose: bool = False, *, choice: LogChoice | None = None) -> LogChoice:
    """Set up the root logger once for a command: stderr, and the log file if one is set.

    Replaces handlers this function installed before (a test may call it twice); a bad
    `RECON_LOG_*` value falls back to text on stderr and is reported when the settings are
    read (one line, exit 2)."""
    if choice is None:
        try:
            choice = log_choice()
        except ConfigError:
            choice = LogChoice("text", None, "INFO")
    formatter: logging.Formatter = JsonFormatter() if choice.format == "json" else TextFormatter()
    handlers: list[logging.Handler] = [StderrHandler()]
    if choice.file is not None:
        try:
            choice.file.expanduser().parent.mkdir(parents=True, exist_ok=True)
            handlers.append(logging.FileHandler(choice.file.expanduser(), encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(
                "RECON_LOG_FILE", f"cannot write {choice.file}: {exc.strerror or exc}"
            ) from None
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_recon", False)]:
        root.removeHandler(old)
        old.close()
    for handler in handlers:
        handler.setFormatter(formatter)
        handler._recon = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else getattr(logging, choice.level))
    for noisy in _NOISY:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return choice
