"""What a report says, read from the warehouse tables only (sql/migrations/).

Every query binds its values (`$run_id`, …); no value is ever formatted into SQL. Sums of
BIGINT are HUGEINT in DuckDB and are cast back to BIGINT; amounts are grouped by currency
and never added across currencies. Free text (reasons, API messages, finding details) is
scrubbed of personal data here (`recon.report.privacy`), so every output gets it clean.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import duckdb

from recon.errors import ConfigError
from recon.report.privacy import personal_values, scrub_text
from recon.report.trend import TrendPoint, load_trend
from recon.warehouse.sql import read_sql

__all__ = [
    "AGING_BUCKETS",
    "AgingRow",
    "AmountAtRisk",
    "CallStats",
    "CheckRow",
    "FailedCall",
    "FindingRow",
    "ReportData",
    "ResourceRow",
    "RunInfo",
    "failed_calls",
    "load_report_data",
]

AGING_BUCKETS = ("0-30", "31-60", "61-90", "90+")

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
class CallStats:
    """What a resource's requests cost this run, from `api_calls` (every attempt)."""

    requests: int = 0
    responses_429: int = 0
    latency_ms: float = 0.0
    # None for a warehouse from before `api_calls.waited_ms`
    waited_ms: float | None = 0.0

    @property
    def time_waiting_ms(self) -> float:
        """In flight (latency) plus held back before sending (limiter, Retry-After, backoff)."""
        return self.latency_ms + (self.waited_ms or 0.0)


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
    calls: CallStats = field(default_factory=CallStats)


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
    coverage: str | None = None
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
    finding_key: str


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
    calls_total: CallStats = field(default_factory=CallStats)
    # finding_key -> personal values its detail quoted (removed from every output)
    personal: dict[str, list[str]] = field(default_factory=dict)

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


def failed_calls(con: duckdb.DuckDBPyConnection, run_id: str) -> list[FailedCall]:
    """The run's calls that failed for good (sql/report/failed_calls.sql), text scrubbed.

    The one reading of them: the report, `recon nightly`'s closing lines, the Prefect
    artifact and the alert all take it from here.
    """
    return [
        FailedCall(
            resource=r[0],
            method=r[1],
            path=r[2],
            query=scrub_text(r[3]),
            http_status=r[4],
            error=scrub_text(r[5]),
            message=scrub_text(r[6]),
            request_id=r[7],
            request_ids=list(r[8]),
            attempts=r[9],
            attempted_at=r[10],
        )
        for r in _rows(con, read_sql("report/failed_calls.sql"), {"run_id": run_id})
    ]


def _rows(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]
) -> list[tuple[Any, ...]]:
    return con.execute(sql, params).fetchall()


_STATUS_ORDER = {"errored": 0, "failed": 1, "not_evaluated": 2, "passed": 3}
_SEVERITY_ORDER = {"error": 0, "warn": 1, "info": 2}


def load_report_data(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    top_n: int,
    drill_down_above: int | None = None,
) -> ReportData:
    """Read everything the report shows about `run_id`; ConfigError if there is no such run.

    The `top_n` largest findings per check and currency are read only when the run has more
    than `drill_down_above` findings (the page's explorer shows them all otherwise)."""
    p = {"run_id": run_id}
    run_rows = _rows(
        con,
        f"SELECT run_id, status, reason, {_ts('started_at')}, {_ts('finished_at')}, trigger "  # noqa: S608
        "FROM runs WHERE run_id = $run_id",
        p,
    )
    if not run_rows:
        raise ConfigError("run_id", f"no run {run_id!r} in the warehouse")
    run_id_, status, reason, started, finished, trigger = run_rows[0]
    run = RunInfo(run_id_, status, scrub_text(reason), started, finished, trigger)

    calls = _load_call_stats(con, run_id)
    resources = [
        replace(ResourceRow(*r), reason=scrub_text(r[2]), calls=calls.get(r[0], CallStats()))
        for r in _rows(
            con,
            "SELECT resource, status, reason, pages, records, duplicates, failed_pages, rejects, "
            "new_records, changed_records, gone_records FROM resource_scans "
            "WHERE run_id = $run_id ORDER BY resource",
            p,
        )
    ]

    # `coverage` (what a verdict covers, in words) is written by newer check runners only
    coverage = "coverage" if _has_column(con, "check_runs", "coverage") else "NULL"
    checks = [
        replace(CheckRow(*r), reason=scrub_text(r[3]), coverage=scrub_text(r[11]))
        for r in _rows(
            con,
            "SELECT check_name, severity, status, reason, description, finding_count, "  # noqa: S608
            "opening_count, new_count, resolved_count, closing_count, duration_ms, "
            f"{coverage} FROM check_runs WHERE run_id = $run_id",
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
        "SELECT check_name, currency, count(*)::BIGINT, sum(amount_minor)::HUGEINT "
        "FROM findings WHERE run_id = $run_id AND state <> 'resolved' "
        "AND amount_minor IS NOT NULL GROUP BY ALL ORDER BY check_name, currency NULLS LAST",
        p,
    ):
        target = by_name.get(name)
        if target is not None:
            target.amounts.append(AmountAtRisk(name, currency, n, amount))

    failed = failed_calls(con, run_id)

    aging = [
        AgingRow(*r)
        for r in _rows(
            con,
            "SELECT currency, issue_type, count(*)::BIGINT, "
            "coalesce(sum(amount_minor), 0)::HUGEINT FROM findings "
            "WHERE run_id = $run_id AND check_name = 'open_invoices' AND state <> 'resolved' "
            "GROUP BY ALL ORDER BY currency NULLS LAST, issue_type",
            p,
        )
    ]

    state_rows = _rows(
        con,
        "SELECT count(*) FILTER (WHERE state <> 'resolved'), "
        "count(*) FILTER (WHERE state IN ('new', 'reopened')),"
        " count(*) FILTER (WHERE state = 'resolved'), count(*) FROM findings "
        "WHERE run_id = $run_id",
        p,
    )
    f_open, f_new, f_resolved, f_total = state_rows[0]

    personal = personal_values(con, run_id)
    top: dict[str, list[FindingRow]] = {}
    if drill_down_above is None or f_total > drill_down_above:
        top = _load_top_findings(con, run_id, top_n, personal)

    trend = load_trend(con, run_id)
    return ReportData(
        run=run,
        resources=resources,
        checks=checks,
        failed_calls=failed,
        aging=aging,
        top_findings=top,
        trend=trend,
        findings_open=f_open,
        findings_new=f_new,
        findings_resolved=f_resolved,
        findings_total_rows=f_total,
        calls_total=_total(calls.values()),
        personal=personal,
    )


def _load_top_findings(
    con: duckdb.DuckDBPyConnection, run_id: str, top_n: int, personal: dict[str, list[str]]
) -> dict[str, list[FindingRow]]:
    """The `top_n` largest unresolved findings per check and currency, and per check how
    many are not shown (`hidden`): one Top-N query per group, memory bounded by `top_n`."""
    top: dict[str, list[FindingRow]] = {}
    p = {"run_id": run_id}
    for check_name, currency, _n in _rows(con, read_sql("report/finding_groups.sql"), p):
        params = p | {"check_name": check_name, "currency": currency, "top_n": top_n}
        for r in _rows(con, read_sql("report/top_findings.sql"), params):
            row = FindingRow(*r)
            detail = scrub_text(row.detail, personal.get(row.finding_key, ()))
            top.setdefault(row.check_name, []).append(replace(row, detail=detail))
    return top


def _has_column(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    found = con.execute(
        "SELECT count(*) FROM duckdb_columns() WHERE table_name = $table "
        "AND column_name = $column AND NOT internal",
        {"table": table, "column": column},
    ).fetchone()
    return bool(found and found[0])


def _load_call_stats(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str | None, CallStats]:
    """Per resource (None: calls of no resource): requests, 429s, time in flight and held."""
    p = {"run_id": run_id}
    waited: dict[str | None, float] | None = None
    if _has_column(con, "api_calls", "waited_ms"):
        waited = {r[0]: r[1] for r in _rows(con, read_sql("report/resource_waits.sql"), p)}
    return {
        resource: CallStats(
            requests=requests,
            responses_429=n429,
            latency_ms=latency,
            waited_ms=None if waited is None else waited.get(resource, 0.0),
        )
        for resource, requests, n429, latency in _rows(
            con, read_sql("report/resource_calls.sql"), p
        )
    }


def _total(stats: Any) -> CallStats:
    items = list(stats)
    waits = [s.waited_ms for s in items]
    return CallStats(
        requests=sum(s.requests for s in items),
        responses_429=sum(s.responses_429 for s in items),
        latency_ms=sum(s.latency_ms for s in items),
        waited_ms=None if any(w is None for w in waits) else sum(w or 0.0 for w in waits),
    )
