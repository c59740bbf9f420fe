"""Record a night's check outcomes: `findings` (new / open / resolved) and `check_runs`.

The set-based SQL is `lifecycle.sql` beside this module (its header states the rules); it
runs in one transaction owned here, after every check was evaluated in autocommit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import duckdb

from recon.checks.definition import used_parameters
from recon.checks.scope import Scope
from recon.warehouse.database import transaction

__all__ = ["CheckRun", "Outcome", "read_check_runs", "record_outcomes"]


@dataclass(frozen=True)
class CheckRun:
    """The outcome of one check in one run, as stored in `check_runs`."""

    run_id: str
    check_name: str
    severity: str
    status: str  # passed | failed | not_evaluated | errored
    reason: str | None
    description: str | None
    finding_count: int
    opening_count: int
    new_count: int
    resolved_count: int
    closing_count: int
    duration_ms: float | None
    coverage: str | None = None  # what an evaluated verdict covers, in words


@dataclass(frozen=True)
class Outcome:
    """One check's evaluation tonight, before the lifecycle records it."""

    name: str
    severity: str
    status: str
    reason: str | None
    description: str | None
    finding_count: int
    duration_ms: float
    scope: Scope
    per_resource: bool
    key_has_issue: bool


_INSERT_STATUS = (
    "INSERT INTO _recon_status SELECT unnest($1::VARCHAR[]), unnest($2::VARCHAR[]), "
    "unnest($3::VARCHAR[]), unnest($4::VARCHAR[]), unnest($5::VARCHAR[]), unnest($6::BIGINT[]), "
    "unnest($7::DOUBLE[]), unnest($8::VARCHAR[]), unnest($9::VARCHAR[][]), "
    "unnest($10::VARCHAR[][]), unnest($11::BOOLEAN[]), unnest($12::BOOLEAN[])"
)


def _lifecycle_statements() -> list[str]:
    text = resources.files("recon.checks").joinpath("lifecycle.sql").read_text(encoding="utf-8")
    parts = text.split("\n-- statement\n")[1:]  # the first part is the file's comment
    return [p.strip() for p in parts if p.strip()]


def record_outcomes(
    con: duckdb.DuckDBPyConnection, outcomes: Sequence[Outcome], values: Mapping[str, Any]
) -> None:
    if not outcomes:
        return
    rows = [
        (
            o.name,
            o.severity,
            o.status,
            o.reason,
            o.description,
            o.finding_count,
            o.duration_ms,
            o.scope.coverage,
            list(o.scope.partial),
            list(o.scope.read_partial),
            o.per_resource,
            o.key_has_issue,
        )
        for o in outcomes
    ]
    # One statement, a list per column (executemany ran an INSERT per check: ~0.03 CPU-s).
    con.execute(_INSERT_STATUS, [list(column) for column in zip(*rows, strict=True)])
    with transaction(con):
        for statement in _lifecycle_statements():
            con.execute(statement, _bind(statement, values))


def read_check_runs(
    con: duckdb.DuckDBPyConnection, run_id: str, names: Sequence[str]
) -> list[CheckRun]:
    rows = con.execute(
        "SELECT run_id, check_name, severity, status, reason, description, finding_count, "
        "opening_count, new_count, resolved_count, closing_count, duration_ms, coverage "
        "FROM check_runs WHERE run_id = ? AND list_contains(?, check_name) ORDER BY check_name",
        [run_id, list(names)],
    ).fetchall()
    return [CheckRun(*row) for row in rows]


def _bind(sql: str, values: Mapping[str, Any]) -> dict[str, Any]:
    # DuckDB rejects named parameters that the statement does not use: pass only those used.
    used = used_parameters(sql)
    return {k: v for k, v in values.items() if k in used}
