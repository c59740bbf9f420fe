"""The `recon` command line.

recon.cli.common     the app, the common options; errors -> one line and an exit code
recon.cli.run        nightly, schedule
recon.cli.steps      extract, load, check, report (one step of the night)
recon.cli.warehouse  query, export (the published warehouse)
recon.cli.match      match (a person's match of a books order with payments)
recon.cli.close      close (a period's close pack)
recon.cli.serve      serve, users (the workbench)
"""

from __future__ import annotations

import sys

from recon.cli import (  # noqa: F401  (importing them registers their commands)
    close,
    match,
    run,
    serve,
    steps,
    warehouse,
)
from recon.cli.common import app

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


def main() -> None:
    """Entry point of the `recon` console script."""
    sys.argv[1:] = _normalise_resume(sys.argv[1:])
    app()
