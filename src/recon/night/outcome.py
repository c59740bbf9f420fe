"""How a run ended, for people and for the shell: the exit codes (docs/design.md, "Exit
codes"), the run's summary and the closing lines `recon nightly` prints, read from the published
warehouse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "EXIT_ABORTED",
    "EXIT_COMPLETE",
    "EXIT_FINDINGS",
    "EXIT_INCOMPLETE",
    "EXIT_USAGE",
    "RunSummary",
    "closing_lines",
    "errored_checks",
    "exit_code_for",
    "worst_failed_severity",
]

EXIT_COMPLETE = 0
EXIT_ABORTED = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_FINDINGS = 4  # only with --fail-on: a check at or above that severity found something

_SEVERITY_RANK = {"info": 0, "warn": 1, "error": 2}


@dataclass
class RunSummary:
    """What the morning needs to know about one run."""

    run_id: str
    status: str
    reason: str | None
    db_path: Path
    report_dir: Path | None
    exit_code: int
    lines: list[str] = field(default_factory=list)
    account: str | None = None  # the account of [accounts] the run is (None: one account)


def exit_code_for(
    status: str, *, worst_failed: str | None, fail_on: str | None, errored: int = 0
) -> int:
    """docs/design.md, "Exit codes": 0 complete, 3 incomplete, 1 failed; `--fail-on` turns
    findings into 4. A check that errored did not look at the night: the night is not known
    good, so it is never 0 (3, as for a list that could not be read)."""
    if status == "failed":
        return EXIT_ABORTED
    if status != "complete" or errored:
        return EXIT_INCOMPLETE
    if fail_on and worst_failed and _SEVERITY_RANK[worst_failed] >= _SEVERITY_RANK[fail_on]:
        return EXIT_FINDINGS
    return EXIT_COMPLETE


def errored_checks(con: Any, run_id: str) -> list[str]:
    """The checks that could not run (an SQL error) for the run, by name."""
    rows = con.execute(
        "SELECT check_name FROM check_runs WHERE run_id = ? AND status = 'errored' "
        "ORDER BY check_name",
        [run_id],
    ).fetchall()
    return [str(r[0]) for r in rows]


def worst_failed_severity(con: Any, run_id: str) -> str | None:
    rows = con.execute(
        "SELECT DISTINCT severity FROM check_runs WHERE run_id = ? AND status = 'failed'",
        [run_id],
    ).fetchall()
    found = [r[0] for r in rows if r[0] in _SEVERITY_RANK]
    return max(found, key=_SEVERITY_RANK.__getitem__) if found else None


def closing_lines(con: Any, run_id: str) -> list[str]:
    """Per resource its status and records, the checks' tally, the calls that failed."""
    lines: list[str] = []
    for resource, status, records, failed in con.execute(
        "SELECT resource, status, records, failed_pages FROM resource_scans "
        "WHERE run_id = ? ORDER BY resource",
        [run_id],
    ).fetchall():
        extra = f", {failed} page(s) failed" if failed else ""
        lines.append(f"  {resource:<16} {status:<11} {records:>9,} records{extra}")
    counts = dict(
        con.execute(
            "SELECT status, count(*) FROM check_runs WHERE run_id = ? GROUP BY status", [run_id]
        ).fetchall()
    )
    if counts:
        # the report's words: a check that found something "has findings", it did not fail
        words = {"failed": "with findings", "not_evaluated": "not evaluated"}
        lines.append(
            "  checks: "
            + ", ".join(
                f"{counts.get(s, 0)} {words.get(s, s)}"
                for s in ("failed", "passed", "not_evaluated", "errored")
            )
        )
        lines += _books_lines(con, run_id)
    from recon.report.data import failed_calls

    done = con.execute("SELECT status = 'complete' FROM runs WHERE run_id = ?", [run_id])
    label = "FAILED (fetched again later)" if (done.fetchone() or (False,))[0] else "FAILED"
    for call in failed_calls(con, run_id)[:5]:
        q = f"?{call.query}" if call.query else ""
        lines.append(
            f"  {label} {call.method} {call.path}{q} → {call.http_status or '-'} "
            f"{call.error or ''} (request_id={call.request_id or 'none given'})"
        )
    return lines


def _books_lines(con: Any, run_id: str) -> list[str]:
    """Where the findings (and the books, when read) stand, as the report's first screen."""
    import duckdb

    from recon.report.headline import books_headline

    try:
        row = con.execute("SELECT count(*) FROM ledger_loads WHERE run_id = ?", [run_id])
        books = bool((row.fetchone() or (0,))[0])
    except duckdb.Error:
        books = False
    lines = []
    for ledger in (False, True) if books else (False,):
        h = books_headline(con, run_id, ledger_configured=ledger)
        what = "books" if ledger else "findings"
        lines.append(
            f"  {what}: {h.open:,} {h.noun}{'s' if h.open != 1 else ''} open, "
            f"{h.new:,} new tonight, {h.resolved:,} resolved tonight"
            + (f", {h.reopened:,} reopened" if h.reopened else "")
        )
    return lines
