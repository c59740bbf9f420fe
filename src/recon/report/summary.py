"""summary.json: what a run's report says, for machines (JSON Schema: summary.schema.json).

Money is integer minor units plus a currency code; times are whole milliseconds; text has
been scrubbed of personal data by `recon.report.data`.
"""

from __future__ import annotations

from typing import Any

from recon.report.data import CallStats, ReportData
from recon.report.ledger import LedgerSection

__all__ = ["SCHEMA_VERSION", "build_summary"]

SCHEMA_VERSION = 1


def _ms(value: float | None) -> int | None:
    return None if value is None else round(value)


def _calls(stats: CallStats) -> dict[str, Any]:
    return {
        "requests": stats.requests,
        "responses_429": stats.responses_429,
        "latency_ms": _ms(stats.latency_ms),
        "waited_ms": _ms(stats.waited_ms),
        "time_waiting_ms": _ms(stats.time_waiting_ms),
    }


def _ledger(section: LedgerSection | None) -> dict[str, Any]:
    """The books against the provider: what was read, the totals per currency, the breaks."""
    if section is None or not section.configured:
        return {"configured": False, "checks": dict(section.checks) if section else {}}
    return {
        "configured": True,
        "inputs": [
            {
                k: load[k]
                for k in (
                    "input",
                    "source",
                    "rows_read",
                    "rows_loaded",
                    "rejects",
                    "suspect",
                    "accepted",
                    "unread_sheets",
                )
            }
            for load in section.loads
        ],
        "rules": [dict(r) for r in section.rules],
        "totals": [
            {
                "currency": t.currency,
                "orders": t.orders,
                "payments": t.payments,
                "books_total_minor": t.books_total,
                "provider_total_minor": t.provider_total,
                "matched_minor": t.matched,
                "unmatched_books_minor": t.unmatched_books,
                "unmatched_provider_minor": t.unmatched_provider,
                "net_difference_minor": t.net_difference,
                "pending_books_minor": t.pending_books,
                "pending_provider_minor": t.pending_provider,
            }
            for t in section.totals
        ],
        "open_breaks": section.open_breaks,
        "acknowledged_breaks": section.acknowledged,
        "pending": section.pending,
        "checks": dict(section.checks),
    }


def build_summary(
    data: ReportData,
    generated_at: str,
    ledger: LedgerSection | None = None,
    *,
    account: str | None = None,
    audit_trail: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The machine-readable summary of `data` (and of the books section, when given);
    `account`: the account of `[accounts]` it is (None with one account); `audit_trail`:
    the trail's chain head, {"lines", "head"} (recon.findings.trail_table.trail_head)."""
    run = data.run
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": generated_at,
        "account": account,
        "audit_trail": audit_trail,
        "run": {
            "run_id": run.run_id,
            "status": run.status,
            "reason": run.reason,
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "trigger": run.trigger,
        },
        "resources": [
            {
                "resource": r.resource,
                "status": r.status,
                "reason": r.reason,
                "pages": r.pages,
                "records": r.records,
                "duplicates": r.duplicates,
                "failed_pages": r.failed_pages,
                "rejects": r.rejects,
                "new_records": r.new_records,
                "changed_records": r.changed_records,
                "gone_records": r.gone_records,
                **_calls(r.calls),
            }
            for r in data.resources
        ],
        "checks": [
            {
                "check_name": c.check_name,
                "severity": c.severity,
                "status": c.status,
                "reason": c.reason,
                "description": c.description,
                "coverage": c.coverage,
                "finding_count": c.finding_count,
                "opening_count": c.opening_count,
                "new_count": c.new_count,
                "resolved_count": c.resolved_count,
                "closing_count": c.closing_count,
                "amounts_at_risk": [
                    {"currency": a.currency, "amount_minor": a.amount_minor, "findings": a.findings}
                    for a in c.amounts
                ],
            }
            for c in data.checks
        ],
        "open_invoice_aging": [
            {
                "currency": a.currency,
                "bucket": a.bucket,
                "invoices": a.invoices,
                "amount_minor": a.amount_minor,
            }
            for a in data.aging
        ],
        "failed_calls": [
            {
                "resource": f.resource,
                "method": f.method,
                "path": f.path,
                "query": f.query,
                "http_status": f.http_status,
                "error": f.error,
                "message": f.message,
                "request_id": f.request_id,
                "request_ids": f.request_ids,
                "attempts": f.attempts,
                "attempted_at": f.attempted_at,
            }
            for f in data.failed_calls
        ],
        "ledger": _ledger(ledger),
        "totals": {
            "findings_open": data.findings_open,
            "findings_new": data.findings_new,
            "findings_resolved": data.findings_resolved,
            "failed_calls": len(data.failed_calls),
            "checks": data.check_status_counts,
            **_calls(data.calls_total),
        },
    }
