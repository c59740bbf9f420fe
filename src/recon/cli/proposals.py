"""`recon proposals [list]|approve|reject`: the four eyes from the command line — the
proposals waiting for an approver, and an approver's decision on one, through the
workbench's service (recon.workbench.service), exactly as in the browser: the approver is
`RECON_USER` (else the OS login), a user of `recon users` with the role approver or admin,
and never the proposal's maker."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recon.cli.common import AccountName, DbPath, app, guard, tell
from recon.errors import ConfigError

if TYPE_CHECKING:
    from recon.workbench.rules import Actor
    from recon.workbench.service import Workbench

__all__ = ["proposals_app"]

proposals_app = typer.Typer(
    rich_markup_mode=None,
    help="Proposals (write-offs, matches, resolutions above the threshold) waiting for an "
    "approver; approve or reject one (four eyes).",
)
app.add_typer(proposals_app, name="proposals")

Note = Annotated[str | None, typer.Option("--note", help="Why (kept in the audit trail).")]
States = ("pending", "approved", "rejected", "all")


def _service(db: Path | None, account: str | None) -> tuple[Workbench, Actor]:
    from recon.findings.selection import warehouse_paths
    from recon.workbench.service import for_cli

    warehouse, _ = warehouse_paths(db, account)
    return for_cli(warehouse)


@proposals_app.command("list")
def list_(
    state: Annotated[
        str, typer.Option(help="pending (waiting for an approver), approved, rejected or all.")
    ] = "pending",
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """List the proposals, newest first: id, what, the finding or order, the maker."""

    def go() -> None:
        if state not in States:
            raise ConfigError("--state", f"must be one of {', '.join(States)}")
        bench, _ = _service(db, account)
        found = bench.proposals(None if state == "all" else state)
        for p in found:
            what = p["reason"] or ", ".join(p["payments"] or {})
            subject = p["finding_key"] or p["order"] or ""
            decided = f" ({p['state']} by {p['decided_by']})" if p["decided_by"] else ""
            tell(f"{p['id']}  {p['kind']:<7} {what:<14} {subject}  by {p['maker']}{decided}")
        tell(f"{len(found)} proposal(s) {state}")

    guard(go)


@proposals_app.command()
def approve(
    proposal: Annotated[str, typer.Argument(help="The proposal's id (P…).")],
    note: Note = None,
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Approve another person's proposal: it is applied at once (approver or admin)."""

    def go() -> None:
        bench, actor = _service(db, account)
        bench.approve(actor, proposal, note)
        tell(f"approved {proposal}; audit trail: {bench.trail.path}")

    guard(go)


@proposals_app.command()
def reject(
    proposal: Annotated[str, typer.Argument(help="The proposal's id (P…).")],
    note: Note = None,
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Reject another person's proposal, saying why (approver or admin)."""

    def go() -> None:
        bench, actor = _service(db, account)
        bench.reject(actor, proposal, note)
        tell(f"rejected {proposal}; audit trail: {bench.trail.path}")

    guard(go)
