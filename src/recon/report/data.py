"""What a report says, read from the warehouse tables only (sql/schema.sql).

Every query binds its values (`$run_id`, …); no value is ever formatted into SQL. Sums of
BIGINT are HUGEINT in DuckDB and are cast back to BIGINT; amounts are grouped by currency
and never added across currencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from recon.errors import ConfigError

__all__ = [
    "AGING_BUCKETS",
    "AgingRow",
    "AmountAtRisk",
    "CheckRow",
    "FailedCall",
    "FindingRow",
    "ReportData",
    "ResourceRow",
    "RunInfo",
    "TrendPoint",
    "load_report_data",
]

AGING_BUCKETS = ("0-30", "31-60", "61-90", "90+")
TREND_RUNS = 30

_TS = "strftime(timezone('UTC', {col}), '%Y-%m-%dT%H:%M:%SZ')"


def _ts(col: str) -> str:
    return _TS.format(col=col)


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    status: str
    reason: str | None
    started_at: str
    finished_at: str | None
    trigger: str | None


@dataclass(frozen=True)
class ResourceRow:
    resource: str
    status: str
    reason: str | None
    pages: int
    records: int
    duplicates: int
    failed_pages: int
    rejects: int
    new_records: int
    changed_records: int
    gone_records: int


@dataclass(frozen=True)
class AmountAtRisk:
    check_name: str
    currency: str | None
    findings: int
    amount_minor: int


@dataclass
class CheckRow:
    check_name: str
    severity: str
    status: str
    reason: str | None
    description: str | None
    finding_count: int
    opening_count: int
    new_count: int
    resolved_count: int
    closing_count: int
    duration_ms: float | None
    amounts: list[AmountAtRisk] = field(default_factory=list)


@dataclass(frozen=True)
class FailedCall:
    resource: str | None
    method: str
    path: str
    query: str | None
    http_status: int | None
    error: str | None
    message: str | None
    request_id: str | None
    request_ids: list[str]
    attempts: int
    attempted_at: str


@dataclass(frozen=True)
class AgingRow:
    currency: str | None
    bucket: str
    invoices: int
    amount_minor: int


@dataclass(frozen=True)
class FindingRow:
    check_name: str
    severity: str
    state: str
    entity: str
    entity_id: str
    currency: str | None
    amount_minor: int | None
    issue_type: str
    detail: str | None
    first_seen_run: str | None


@dataclass(frozen=True)
class TrendPoint:
    run_id: str
    started_at: str
    status: str
    open_by_severity: dict[str, int]
    new: int
    resolved: int
    records_by_resource: dict[str, int]


@dataclass
class ReportData:
    run: RunInfo
    resources: list[ResourceRow]
    checks: list[CheckRow]
    failed_calls: list[FailedCall]
    aging: list[AgingRow]
    top_findings: dict[str, list[FindingRow]]
    trend: list[TrendPoint]
    findings_open: int
    findings_new: int
    findings_resolved: int
    findings_total_rows: int

    @property
    def check_status_counts(self) -> dict[str, int]:
        counts = {"passed": 0, "failed": 0, "not_evaluated": 0, "errored": 0}
        for check in self.checks:
            counts[check.status] = counts.get(check.status, 0) + 1
        return counts

    @property
    def currencies(self) -> list[str | None]:
        """Every currency with an amount at risk, ISO codes first, then odd ones."""
        seen = {a.currency for c in self.checks for a in c.amounts}
        return sorted(seen, key=lambda c: (c is None, c or ""))


def _rows(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]
) -> list[tuple[Any, ...]]:
    return con.execute(sql, params).fetchall()


_STATUS_ORDER = {"errored": 0, "failed": 1, "not_evaluated": 2, "passed": 3}
_SEVERITY_ORDER = {"error": 0, "warn": 1, "info": 2}


def load_report_data(con: duckdb.DuckDBPyConnection, run_id: str, top_n: int) -> ReportData:
    """Read everything the report shows about `run_id`; ConfigError if there is no such run."""
    p = {"run_id": run_id}
    run_rows = _rows(
        con,
        f"SELECT run_id, status, reason, {_ts('started_at')}, {_ts('finished_at')}, trigger "  # noqa: S608
        "FROM runs WHERE run_id = $run_id",
        p,
    )
    if not run_rows:
        raise ConfigError("run_id", f"no run {run_id!r} in the warehouse")
    run = RunInfo(*run_rows[0])

    resources = [
        ResourceRow(*r)
        for r in _rows(
            con,
            "SELECT resource, status, reason, pages, records, duplicates, failed_pages, rejects, "
            "new_records, changed_records, gone_records FROM resource_scans "
            "WHERE run_id = $run_id ORDER BY resource",
            p,
        )
    ]

    checks = [
        CheckRow(*r)
        for r in _rows(
            con,
            "SELECT check_name, severity, status, reason, description, finding_count, "
            "opening_count, new_count, resolved_count, closing_count, duration_ms "
            "FROM check_runs WHERE run_id = $run_id",
            p,
        )
    ]
    checks.sort(
        key=lambda c: (
            _STATUS_ORDER.get(c.status, -1),
            _SEVERITY_ORDER.get(c.severity, 9),
            c.check_name,
        )
    )
    by_name = {c.check_name: c for c in checks}
    for name, currency, n, amount in _rows(
        con,
        "SELECT check_name, currency, count(*)::BIGINT, sum(amount_minor)::BIGINT "
        "FROM findings WHERE run_id = $run_id AND state <> 'resolved' "
        "AND amount_minor IS NOT NULL GROUP BY ALL ORDER BY check_name, currency NULLS LAST",
        p,
    ):
        target = by_name.get(name)
        if target is not None:
            target.amounts.append(AmountAtRisk(name, currency, n, amount))

    failed_calls = [
        FailedCall(
            resource=r[0],
            method=r[1],
            path=r[2],
            query=r[3],
            http_status=r[4],
            error=r[5],
            message=r[6],
            request_id=r[7],
            request_ids=list(r[8] or []),
            attempts=r[9],
            attempted_at=r[10],
        )
        for r in _rows(
            con,
            "SELECT resource, method, path, query, http_status, error, message, request_id, "  # noqa: S608
            f"request_ids, attempts, {_ts('attempted_at')} FROM failed_calls "
            "WHERE run_id = $run_id ORDER BY attempted_at, call_id",
            p,
        )
    ]

    aging = [
        AgingRow(*r)
        for r in _rows(
            con,
            "SELECT currency, issue_type, count(*)::BIGINT, "
            "coalesce(sum(amount_minor), 0)::BIGINT FROM findings "
            "WHERE run_id = $run_id AND check_name = 'open_invoices' AND state <> 'resolved' "
            "GROUP BY ALL ORDER BY currency NULLS LAST, issue_type",
            p,
        )
    ]

    top: dict[str, list[FindingRow]] = {}
    for r in _rows(
        con,
        "SELECT check_name, severity, state, entity, entity_id, currency, amount_minor, "
        "issue_type, detail, first_seen_run FROM findings "
        "WHERE run_id = $run_id AND state <> 'resolved' "
        "QUALIFY row_number() OVER (PARTITION BY check_name, currency "
        "ORDER BY abs(amount_minor) DESC NULLS LAST, entity_id, issue_type) <= $top_n "
        "ORDER BY check_name, currency NULLS LAST, abs(amount_minor) DESC NULLS LAST, "
        "entity_id, issue_type",
        {**p, "top_n": top_n},
    ):
        top.setdefault(r[0], []).append(FindingRow(*r))

    state_rows = _rows(
        con,
        "SELECT count(*) FILTER (WHERE state <> 'resolved'), count(*) FILTER (WHERE state = 'new'),"
        " count(*) FILTER (WHERE state = 'resolved'), count(*) FROM findings "
        "WHERE run_id = $run_id",
        p,
    )
    f_open, f_new, f_resolved, f_total = state_rows[0]

    trend = _load_trend(con, run_id)
    return ReportData(
        run=run,
        resources=resources,
        checks=checks,
        failed_calls=failed_calls,
        aging=aging,
        top_findings=top,
        trend=trend,
        findings_open=f_open,
        findings_new=f_new,
        findings_resolved=f_resolved,
        findings_total_rows=f_total,
    )


def _load_trend(con: duckdb.DuckDBPyConnection, run_id: str) -> list[TrendPoint]:
    """The last `TREND_RUNS` runs up to and including `run_id`, oldest first."""
    p: dict[str, Any] = {"run_id": run_id, "n": TREND_RUNS}
    recent = (
        "SELECT run_id, started_at, status FROM runs "
        "WHERE started_at <= (SELECT started_at FROM runs WHERE run_id = $run_id) "
        "ORDER BY started_at DESC, run_id DESC LIMIT $n"
    )
    runs = _rows(
        con,
        f"SELECT run_id, {_ts('started_at')}, status FROM ({recent}) "  # noqa: S608
        "ORDER BY started_at, run_id",
        p,
    )
    sev: dict[str, dict[str, int]] = {}
    moves: dict[str, tuple[int, int]] = {}
    for rid, severity, n_open, n_new, n_resolved in _rows(
        con,
        "SELECT f.run_id, f.severity, count(*) FILTER (WHERE f.state <> 'resolved'), "  # noqa: S608
        "count(*) FILTER (WHERE f.state = 'new'), count(*) FILTER (WHERE f.state = 'resolved') "
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
