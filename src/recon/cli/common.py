"""What every `recon` command shares: the app, the consoles, the common options, and the one
place where library errors become one-line messages and exit codes: 2 for a bad setting or
argument, 1 for an aborted run (auth refused, warehouse unusable), 3 for a run that finished
incomplete, 0 for a complete one (docs/design.md, "Exit codes").
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from recon.cli import worklist as cli_worklist  # noqa: F401  (registers findings export and import
from recon.cli.findings import app as findings_app
from recon.cli.sandbox import app as sandbox_app
from recon.errors import (
    AuthError,
    ConfigError,
    ReconError,
    UsageError,
    disk_full,
    duckdb_refusal,
    scrub,
)

__all__ = [
    "AccountName",
    "BaseUrl",
    "DbPath",
    "LandingDir",
    "ReportsDir",
    "RunId",
    "app",
    "as_overrides",
    "bars_wanted",
    "configure_logging",
    "err",
    "fail",
    "guard",
    "out",
    "progress_display",
    "recon_command",
    "say",
    "tell",
    "warn_unknown_variables",
]

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    help="recon: reconcile the Merchant Payments API into DuckDB, check it, report it.",
)
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(findings_app, name="findings")


@app.callback()
def _before_every_command() -> None:
    warn_unknown_variables()


def warn_unknown_variables() -> None:
    """Name every `RECON_*` variable recon does not read, with the closest known name."""
    from recon.config.environment import unknown_variable_warning, unreported_unknown_variables

    for name, close in unreported_unknown_variables():
        say(f"recon: warning: {unknown_variable_warning(name, close)}")


out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)
T = TypeVar("T")

BaseUrl = Annotated[
    str | None, typer.Option("--base-url", help="API base address (RECON_BASE_URL).")
]
DbPath = Annotated[
    Path | None, typer.Option("--db", help="Warehouse file (RECON_DB).", dir_okay=False)
]
ReportsDir = Annotated[
    Path | None, typer.Option("--reports", help="Reports folder (RECON_REPORTS).", file_okay=False)
]
LandingDir = Annotated[
    Path | None, typer.Option("--landing", help="Landing folder (RECON_LANDING).", file_okay=False)
]
AccountName = Annotated[
    str | None,
    typer.Option("--account", help="One account's own warehouse (with [accounts] in recon.toml)."),
]
RunId = Annotated[
    str | None, typer.Option("--run", help="Run id (default: the newest loaded run).")
]


def as_overrides(**values: Any) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in values.items() if v is not None}


def say(message: str) -> None:
    from recon.logs import say_line

    level = "WARNING" if message.startswith("recon: warning:") else "INFO"
    say_line(level, message.removeprefix("recon: "), message)


def tell(message: str) -> None:
    out.print(message, highlight=False, markup=False)


def fail(code: int, message: str) -> typer.Exit:
    from recon.logs import say_line

    say_line("ERROR", scrub(message), f"recon: {scrub(message)}")
    return typer.Exit(code)


def guard(fn: Callable[[], T]) -> T:
    """Run `fn`, turning recon's errors into one line and the right exit code."""
    try:
        return fn()
    except UsageError as exc:
        raise fail(2, str(exc)) from None
    except ConfigError as exc:
        raise fail(2, f"bad setting {exc}") from None
    except AuthError as exc:
        raise fail(1, f"aborted: {exc}") from None
    except ReconError as exc:
        raise fail(1, f"aborted: {exc}") from None
    except OSError as exc:
        if not disk_full(exc):
            raise
        where = f" writing {exc.filename}" if exc.filename else ""
        raise fail(1, f"aborted: no space left on the device{where}") from None
    except Exception as exc:
        # the warehouse refused what a command asked of it (e.g. a table the file has not):
        # its first line, never a traceback
        if (refused := duckdb_refusal(exc)) is None:
            raise
        raise fail(1, f"aborted: the warehouse refused: {refused}") from None


def configure_logging(verbose: bool) -> None:
    """Log lines as RECON_LOG_FORMAT / RECON_LOG_FILE / RECON_LOG_LEVEL ask (recon.logs)."""
    from recon.logs import configure

    configure(verbose)


def bars_wanted(enabled: bool = True) -> bool:
    """Progress bars only on a terminal, and only with text logs (JSON lines are for tools)."""
    from recon.logs import LogChoice, log_choice

    try:
        choice = log_choice()
    except ConfigError:
        choice = LogChoice("text", None, "INFO")
    return enabled and sys.stderr.isatty() and choice.format == "text"


@contextlib.contextmanager
def progress_display(enabled: bool) -> Iterator[None]:
    from recon.night import progress

    if bars_wanted(enabled):
        with progress.RichProgress() as display:
            progress.use(display)
            try:
                yield
            finally:
                progress.use(None)
    else:
        progress.use(progress.LogProgress())
        try:
            yield
        finally:
            progress.use(None)


def recon_command() -> str:
    """How to run this recon again from wherever the user stands.

    `recon` when the `recon` on PATH is the one running; else its absolute path (e.g. a
    project's `.venv/bin/recon` run from another folder); `python -m recon` as run.
    """
    argv0 = Path(sys.argv[0])
    if argv0.name in ("__main__.py", "-m") or argv0.suffix == ".py":
        return f"{shlex.quote(sys.executable)} -m recon"
    running = argv0.resolve() if argv0.exists() else None
    found = shutil.which("recon")
    if running is not None and found and Path(found).resolve() == running:
        return "recon"
    if running is not None:
        return shlex.quote(os.path.abspath(argv0))
    return "recon"
