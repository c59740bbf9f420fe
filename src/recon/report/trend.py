"""The report's trends: the last nights' findings and records, read from the warehouse."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

__all__ = ["TREND_RUNS", "TrendPoint", "load_trend"]

TREND_RUNS = 30
_TS = "strftime(timezone('UTC', {col}), '%Y-%m-%dT%H:%M:%SZ')"


def _rows(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]
) -> list[tuple[Any, ...]]:
    return con.execute(sql, params).fetchall()


@dataclass(frozen=True)
class TrendPoint:
    run_id: str
    started_at: str
    status: str
    open_by_severity: dict[str, int]
    new: int
    resolved: int
    records_by_resource: dict[str, int]


def load_trend(con: duckdb.DuckDBPyConnection, run_id: str) -> list[TrendPoint]:
    """The last `TREND_RUNS` runs up to and including `run_id`, oldest first."""
    p: dict[str, Any] = {"run_id": run_id, "n": TREND_RUNS}
    recent = (
        "SELECT run_id, started_at, status FROM runs "
        "WHERE started_at <= (SELECT started_at FROM runs WHERE run_id = $run_id) "
        "ORDER BY started_at DESC, run_id DESC LIMIT $n"
    )
    runs = _rows(
        con,
        f"SELECT run_id, {_TS.format(col='started_at')}, status FROM ({recent}) "  # noqa: S608
        "ORDER BY started_at, run_id",
        p,
    )
    sev: dict[str, dict[str, int]] = {}
    moves: dict[str, tuple[int, int]] = {}
    for rid, severity, n_open, n_new, n_resolved in _rows(
        con,
        "SELECT f.run_id, f.severity, count(*) FILTER (WHERE f.state <> 'resolved'), "  # noqa: S608
        "count(*) FILTER (WHERE f.state IN ('new', 'reopened')), "
        "count(*) FILTER (WHERE f.state = 'resolved') "
        f"FROM findings f JOIN ({recent}) r USING (run_id) GROUP BY ALL",
        p,
    ):
        sev.setdefault(rid, {})[severity] = n_open
        new, resolved = moves.get(rid, (0, 0))
        moves[rid] = (new + n_new, resolved + n_resolved)
    records: dict[str, dict[str, int]] = {}
    for rid, resource, n in _rows(
        con,
        "SELECT s.run_id, s.resource, s.records FROM resource_scans s "  # noqa: S608
        f"JOIN ({recent}) r USING (run_id)",
        p,
    ):
        records.setdefault(rid, {})[resource] = n
    return [
        TrendPoint(
            run_id=rid,
            started_at=started,
            status=status,
            open_by_severity=sev.get(rid, {}),
            new=moves.get(rid, (0, 0))[0],
            resolved=moves.get(rid, (0, 0))[1],
            records_by_resource=records.get(rid, {}),
        )
        for rid, started, status in runs
    ]
