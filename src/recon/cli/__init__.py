"""The `recon` command line.

recon.cli.common     the app, the common options; errors -> one line and an exit code
recon.cli.run        nightly, schedule
recon.cli.steps      extract, load, check, report (one step of the night)
recon.cli.warehouse  query, export (the published warehouse)
recon.cli.match      match (a person's match of a books order with payments)
recon.cli.close      close (a period's close pack)
recon.cli.serve      serve, users (the workbench)
recon.cli.proposals  proposals list|approve|reject (the workbench's four eyes)
"""

from __future__ import annotations

import os
import sys

from recon.cli import (  # noqa: F401  (importing them registers their commands)
    close,
    match,
    proposals,
    run,
    serve,
    steps,
    warehouse,
)
from recon.cli.common import app, fail
from recon.errors import ConfigError, UsageError

__all__ = ["app", "main"]


def _normalise_resume(argv: list[str]) -> list[str]:
    """`--resume` / `--retry-failed` with no value mean the newest run (typer needs the
    value spelt out)."""
    fixed: list[str] = []
    for i, arg in enumerate(argv):
        fixed.append(arg)
        if arg in ("--resume", "--retry-failed"):
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if nxt is None or nxt.startswith("-"):
                fixed.append("latest")
    return fixed


#: The commands that make HTTP requests (to the API, the sandbox, Prefect, a webhook): a
#: proxy setting that cannot be used stops them before they start.
_REQUESTING = frozenset({"nightly", "extract", "schedule", "sandbox", "report"})


#: The variables that name a proxy (httpx reads them, lower case first).
_PROXIES = tuple(n for s in ("http", "https", "all") for n in (f"{s}_proxy", f"{s.upper()}_PROXY"))


def _check_proxies(argv: list[str]) -> None:
    """Loopback never through a proxy, for every HTTP client of the process; a proxy URL
    that cannot be used is one line naming its variable, exit 2. (httpx is imported only
    when a proxy is named: most commands make no request.)"""
    if not any(os.environ.get(name, "").strip() for name in _PROXIES):
        return
    from recon.api.transport import environment_proxies, keep_loopback_direct
    from recon.cli.common import fail
    from recon.errors import ConfigError

    keep_loopback_direct()
    if not _REQUESTING.intersection(argv[:1]):
        return
    try:
        environment_proxies()
    except ConfigError as exc:
        fail(2, f"bad setting {exc}")
        sys.exit(2)


def main() -> None:
    """Entry point of the `recon` console script."""
    sys.argv[1:] = _normalise_resume(sys.argv[1:])
    _check_proxies(sys.argv[1:])
    try:
        app()
    except UsageError as exc:  # read outside a command's `guard`: still one line, exit 2
        raise SystemExit(fail(2, str(exc)).exit_code) from None
    except ConfigError as exc:
        raise SystemExit(fail(2, f"bad setting {exc}").exit_code) from None
