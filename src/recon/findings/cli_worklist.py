"""`recon findings export|import`: the Excel round trip (recon.findings.worklist)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recon.errors import ConfigError
from recon.findings.cli import app
from recon.findings.selection import (
    AccountName,
    DbPath,
    Selection,
    guard,
    warehouse_paths,
    with_selection,
)

if TYPE_CHECKING:
    from recon.findings.listing import Finding

__all__ = ["export_", "import_"]


def _personal(warehouse: Path, found: Sequence[Finding]) -> dict[str, list[str]]:
    """The personal values the findings' details quote (removed from the worklist)."""
    from recon.database import open_readonly
    from recon.report.privacy import personal_values

    if not found:
        return {}
    con = open_readonly(warehouse)
    try:
        return personal_values(con, found[0].run_id)
    finally:
        con.close()


@app.command("export")
@with_selection
def export_(
    out: Annotated[Path, typer.Argument(help="The worklist to write (.xlsx).", dir_okay=False)],
    *,
    sel: Selection,
) -> None:
    """Write a worklist (.xlsx) of the findings the filters keep: fill in action, owner,
    reason, note and until, then `recon findings import` it. With RECON_EXPORT_ROOT set, the
    worklist must be inside that folder (a relative OUT is taken inside it)."""
    from recon.analyst.export import output_path
    from recon.findings.listing import list_findings
    from recon.findings.worklist import write_worklist

    def go() -> int:
        if out.suffix.lower() != ".xlsx":
            raise ConfigError("OUT", f"{out.name}: a worklist is an .xlsx file")
        # like `recon export`: with RECON_EXPORT_ROOT set, only inside that folder
        root = os.environ.get("RECON_EXPORT_ROOT") or None
        target = output_path(out, Path(root) if root else None, "xlsx")
        warehouse, log = sel.paths()
        filters = sel.filters()
        found = list_findings(warehouse, log, filters=filters)
        write_worklist(
            found, target, filters=filters.describe(), personal=_personal(warehouse, found)
        )
        typer.echo(f"wrote {len(found):,} finding(s) to {target}")
        return 0

    raise typer.Exit(guard(go))


@app.command("import")
def import_(
    worklist: Annotated[Path, typer.Argument(help="A filled-in worklist (.xlsx).", dir_okay=False)],
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Apply the filled rows of a worklist; a row that cannot be applied is refused with its
    row number and reason, the rest applied."""
    from recon.findings.worklist import apply_worklist

    def go() -> int:
        warehouse, log = warehouse_paths(db, account)
        result = apply_worklist(worklist, warehouse, log)
        for line in result.lines():
            typer.echo(line)
        return 1 if result.refused else 0

    raise typer.Exit(guard(go))
