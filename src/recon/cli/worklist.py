"""`recon findings export|import`: the Excel round trip (recon.workbench.worklist writes
it, recon.workbench.importing applies it)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recon.cli.findings import app
from recon.errors import ConfigError, UsageError
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


def _personal(warehouse: Path, run_id: str | None) -> dict[str, list[str]]:
    """The personal values the findings' details quote (removed from the worklist)."""
    from recon.report.privacy import personal_values
    from recon.warehouse.database import open_readonly

    if run_id is None:
        return {}
    con = open_readonly(warehouse)
    try:
        return personal_values(con, run_id)
    finally:
        con.close()


#: What to run instead of a worklist too long for Excel (words shown, never executed).
PARQUET_COMMAND = 'recon export findings.parquet --query "SELECT * FROM findings_current"'


def _too_many(count: int, sheet_rows: int) -> str:
    return (
        f"{count:,} findings do not fit one Excel sheet ({sheet_rows - 1:,} rows): narrow "
        "them with the filters (--check, --currency, --older-than, --state), or take every "
        f"finding as Parquet: {PARQUET_COMMAND}"
    )


def _count(found: Iterable[Finding]) -> tuple[int, str | None]:
    """How many findings, and their run: one streamed pass, nothing kept."""
    count, run_id = 0, None
    for f in found:
        count += 1
        run_id = f.run_id
    return count, run_id


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
    from recon.findings.listing import iter_findings
    from recon.workbench.worklist import EXCEL_MAX_ROWS, write_worklist

    def go() -> int:
        if out.suffix.lower() != ".xlsx":
            raise ConfigError("OUT", f"{out.name}: a worklist is an .xlsx file")
        # like `recon export`: with RECON_EXPORT_ROOT set, only inside that folder
        root = os.environ.get("RECON_EXPORT_ROOT") or None
        target = output_path(out, Path(root) if root else None, "xlsx")
        warehouse, log = sel.paths()
        filters = sel.filters()
        # counted first (a stream: a million findings are never held), then written
        count, run_id = _count(iter_findings(warehouse, log, filters=filters, order="none"))
        if count >= EXCEL_MAX_ROWS:
            raise UsageError("OUT", _too_many(count, EXCEL_MAX_ROWS))
        write_worklist(
            iter_findings(warehouse, log, filters=filters),
            target,
            filters=filters.describe(),
            personal=_personal(warehouse, run_id),
            count=count,
        )
        typer.echo(f"wrote {count:,} finding(s) to {target}")
        return 0

    raise typer.Exit(guard(go))


@app.command("import")
def import_(
    worklist: Annotated[Path, typer.Argument(help="A filled-in worklist (.xlsx).", dir_okay=False)],
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Apply the filled rows of a worklist; a row that cannot be applied is refused with its
    row number and reason, the rest applied (with users: with the importer's role, a
    write-off or a match proposed for an approver)."""
    from recon.workbench.importing import apply_worklist
    from recon.workbench.service import for_cli

    def go() -> int:
        warehouse, _ = warehouse_paths(db, account)
        bench, actor = for_cli(warehouse)  # who imports, with their role (four eyes)
        result = apply_worklist(worklist, bench, actor)
        for line in result.lines():
            typer.echo(line)
        return 1 if result.refused else 0

    raise typer.Exit(guard(go))
