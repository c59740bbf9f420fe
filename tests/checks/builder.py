"""A tiny warehouse builder for check tests: the real schema, hand-made rows."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from recon.catalogue.resources import nightly_resources
from recon.checks import CheckParams, CheckRun, run_checks
from recon.warehouse.migrations import apply_migrations

REPO = Path(__file__).resolve().parents[2]
# The lists a nightly run reads, from the catalogue (tests/checks/test_catalogue.py checks it).
RESOURCES = tuple(r.name for r in nightly_resources())
ANCHOR = datetime(2026, 11, 20, 2, 0, tzinfo=UTC)

Finding = tuple[str, str]  # (entity_id, issue_type)


class Wh:
    """A DuckDB file with the migrated schema and helpers inserting typed rows plus raw JSON."""

    def __init__(self, path: Path) -> None:
        self.con = duckdb.connect(str(path))
        apply_migrations(self.con)
        self.params = CheckParams()

    # runs -----------------------------------------------------------------------------
    def run(
        self,
        run_id: str,
        *,
        day: int = 0,
        status: str = "complete",
        scans: Mapping[str, str | tuple[str, int]] | None = None,
        new_records: Mapping[str, int] | None = None,
        records: Mapping[str, int] | None = None,
    ) -> datetime:
        """Record run `run_id` started `day` days after ANCHOR; every resource complete
        unless `scans` says otherwise (`status` or `(status, failed_pages)`); `records` is
        how many records each scan read (resource_scans.records, default 0)."""
        started = ANCHOR + timedelta(days=day)
        self.con.execute(
            "INSERT INTO runs (run_id, started_at, status) VALUES (?, ?, ?)",
            [run_id, started, status],
        )
        given = dict(scans or {})
        for resource in RESOURCES:
            value = given.get(resource, "complete")
            scan_status, failed = value if isinstance(value, tuple) else (value, 0)
            self.con.execute(
                "INSERT INTO resource_scans "
                "(run_id, resource, status, failed_pages, new_records, records) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    run_id,
                    resource,
                    scan_status,
                    failed,
                    (new_records or {}).get(resource, 0),
                    (records or {}).get(resource, 0),
                ],
            )
        return started

    def failed_page(
        self, run_id: str, resource: str, skip: int, size: int = 200, *, path: str | None = None
    ) -> None:
        """A list page that failed for good (as the call log records it)."""
        self.con.execute(
            "INSERT INTO api_calls (run_id, call_id, resource, method, path, query, attempt, "
            "http_status, error, request_id, outcome, attempted_at) "
            "VALUES (?, ?, ?, 'GET', ?, ?, 5, 503, 'unavailable', ?, 'failed', ?)",
            [
                run_id,
                f"call_{resource}_{skip}",
                resource,
                path or f"/api/v1/{resource.replace('_', '-')}",
                f"max-records={size}&skip={skip}",
                f"req_{skip}",
                ANCHOR,
            ],
        )

    def presence(self, run_id: str, resource: str, field: str, records: int, present: int) -> None:
        """How many of the records of `resource` landed in `run_id` carry mapped `field`."""
        self.con.execute(
            "INSERT INTO field_presence (run_id, resource, field, json_path, records, present) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [run_id, resource, field, f"$.{field}", records, present],
        )

    def checks(
        self, run_id: str, only: Sequence[str] | None = None, **kwargs: Any
    ) -> dict[str, CheckRun]:
        as_of = self.con.execute(
            "SELECT started_at FROM runs WHERE run_id = ?", [run_id]
        ).fetchone()
        assert as_of is not None
        runs = run_checks(
            self.con,
            run_id=run_id,
            as_of=as_of[0],
            params=kwargs.pop("params", self.params),
            only=only,
            **kwargs,
        )
        return {r.check_name: r for r in runs}

    def findings(self, check: str, run_id: str = "r1") -> set[Finding]:
        """The (entity_id, issue_type) found tonight (state new/open) by `check`."""
        rows = self.con.execute(
            "SELECT entity_id, issue_type FROM findings "
            "WHERE run_id = ? AND check_name = ? AND state IN ('new', 'open')",
            [run_id, check],
        ).fetchall()
        return {(r[0], r[1]) for r in rows}

    def rows(self, check: str, run_id: str = "r1") -> dict[tuple[str, str], dict[str, Any]]:
        cur = self.con.execute(
            "SELECT * FROM findings WHERE run_id = ? AND check_name = ?", [run_id, check]
        )
        names = [d[0] for d in cur.description or []]
        out = {}
        for row in cur.fetchall():
            record = dict(zip(names, row, strict=True))
            out[(record["entity_id"], record["issue_type"])] = record
        return out

    def evaluate(self, check: str, run_id: str = "r1", **kwargs: Any) -> set[Finding]:
        """Run one check for `run_id` (recording the run first if needed); its findings."""
        known = self.con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if known is None or known[0] == 0:
            self.run(run_id)
        result = self.checks(run_id, only=[check], **kwargs)[check]
        assert result.status in ("passed", "failed"), (result.status, result.reason)
        return self.findings(check, run_id)

    # records --------------------------------------------------------------------------
    def _insert(self, table: str, columns: Mapping[str, Any], raw: Mapping[str, Any]) -> None:
        values = dict(columns)
        values["raw"] = json.dumps(raw)
        values.setdefault("content_hash", "h")
        values.setdefault("first_seen_run", "r1")
        values.setdefault("last_seen_run", "r1")
        names = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        self.con.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(values.values()))

    def payment(
        self,
        pid: str,
        amount: Any = 1000,
        currency: str | None = "EUR",
        status: str | None = "confirmed",
        *,
        reference: str | None = None,
        created_days_ago: float = 1,
        gone: str | None = None,
        first_seen: str = "r1",
        seen: str = "r1",
    ) -> None:
        created = ANCHOR - timedelta(days=created_days_ago)
        raw: dict[str, Any] = {
            "id": pid,
            "amountMinor": amount,
            "currency": currency,
            "status": status,
            "createdAt": created.isoformat(),
        }
        if reference is not None:
            raw["reference"] = reference
        self._insert(
            "payments",
            {
                "id": pid,
                "amount_minor": _typed(amount),
                "currency": currency,
                "status": status,
                "reference": reference,
                "created_at": created,
                "gone_in_run": gone,
                "first_seen_run": first_seen,
                "last_seen_run": seen,
            },
            raw,
        )

    def refund(
        self,
        rid: str,
        payment_id: str | None,
        amount: Any = 100,
        currency: str | None = "EUR",
        status: str | None = "succeeded",
        *,
        created_days_ago: float = 1,
        gone: str | None = None,
        seen: str = "r1",
    ) -> None:
        created = ANCHOR - timedelta(days=created_days_ago)
        self._insert(
            "refunds",
            {
                "id": rid,
                "payment_id": payment_id,
                "amount_minor": _typed(amount),
                "currency": currency,
                "status": status,
                "created_at": created,
                "gone_in_run": gone,
                "last_seen_run": seen,
            },
            {
                "id": rid,
                "paymentId": payment_id,
                "status": status,
                "createdAt": created.isoformat(),
                "amount": {"amountMinor": amount, "currency": currency},
            },
        )

    def invoice(
        self,
        iid: str,
        amount: Any = 5000,
        currency: str | None = "EUR",
        status: str = "open",
        *,
        customer: str | None = "cus_1",
        due: str | None = None,
        first_seen: str = "r1",
        gone: str | None = None,
        seen: str = "r1",
    ) -> None:
        raw: dict[str, Any] = {
            "id": iid,
            "customerId": customer,
            "status": status,
            "amountDue": {"amountMinor": amount, "currency": currency},
        }
        if due is not None:
            raw["dueDate"] = due
        self._insert(
            "invoices",
            {
                "id": iid,
                "customer_id": customer,
                "status": status,
                "amount_due_minor": _typed(amount),
                "currency": currency,
                "due_date": due,
                "first_seen_run": first_seen,
                "gone_in_run": gone,
                "last_seen_run": seen,
            },
            raw,
        )

    def subscription(
        self, sid: str, customer: str, status: str | None = "active", *, gone: str | None = None
    ) -> None:
        self._insert(
            "subscriptions",
            {
                "id": sid,
                "customer_id": customer,
                "price_id": "price_1",
                "status": status,
                "gone_in_run": gone,
            },
            {"id": sid, "customerId": customer, "priceId": "price_1", "status": status},
        )

    def dispute(
        self,
        did: str,
        payment_id: str | None,
        amount: Any = 500,
        currency: str | None = "EUR",
        status: str | None = "needs_response",
        *,
        seen: str = "r1",
    ) -> None:
        raw: dict[str, Any] = {
            "id": did,
            "status": status,
            "reason": "fraudulent",
            "amount": {"amountMinor": amount, "currency": currency},
        }
        if payment_id is not None:
            raw["paymentId"] = payment_id
        self._insert(
            "disputes",
            {
                "id": did,
                "payment_id": payment_id,
                "amount_minor": _typed(amount),
                "currency": currency,
                "status": status,
                "reason": "fraudulent",
                "last_seen_run": seen,
            },
            raw,
        )

    def intent(
        self,
        iid: str,
        amount: Any = 1000,
        currency: str | None = "EUR",
        status: str | None = "succeeded",
        *,
        created_days_ago: float = 1,
        gone: str | None = None,
    ) -> None:
        created = ANCHOR - timedelta(days=created_days_ago)
        self._insert(
            "payment_intents",
            {
                "id": iid,
                "status": status,
                "capture_method": "automatic",
                "amount_minor": _typed(amount),
                "currency": currency,
                "created_at": created,
                "gone_in_run": gone,
            },
            {
                "id": iid,
                "status": status,
                "captureMethod": "automatic",
                "amount": amount,
                "currency": currency,
                "createdAt": created.isoformat(),
            },
        )

    def version(
        self,
        entity: str,
        rid: str,
        version: int,
        run_id: str,
        change: str,
        status: str | None,
        amount: int | None = 1000,
        currency: str = "EUR",
    ) -> None:
        self.con.execute(
            "INSERT INTO record_versions (entity, id, version, run_id, change, status, "
            "amount_minor, currency) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [entity, rid, version, run_id, change, status, amount, currency],
        )

    def close(self) -> None:
        self.con.close()


def _typed(value: Any) -> int | None:
    """What the lenient loader puts in a BIGINT column: the JSON integer, else NULL."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def ids(findings: Iterable[Finding]) -> set[str]:
    return {f[0] for f in findings}
