"""Extract: page every listable resource and land each batch before going on.

The unit of work is one resource (`extract_resource`), so that the Prefect flow can map it
over resources on threads or a Dask cluster; `extract_all` runs them on local threads.
Each unit builds its own client from settings read inside it (secrets never travel as
arguments) and writes only under its own landing folder.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any, Protocol

import pyarrow.parquet as pq

from recon.api import ApiClient, ClientConfig
from recon.errors import AuthError, ConfigError, ReconError, TransportError
from recon.landing import CallBuffer, ResourceLanding, RunLanding
from recon.settings import Settings

__all__ = [
    "LISTED_RESOURCES",
    "Progress",
    "ResourceOutcome",
    "extract_all",
    "extract_resource",
    "resources_for",
]

log = logging.getLogger("recon.extract")

LISTED_RESOURCES = (
    "payments",
    "refunds",
    "disputes",
    "subscriptions",
    "invoices",
    "payment_intents",
)


class Progress(Protocol):
    """Receives progress per resource (a rich display, log lines, or nothing)."""

    def update(self, resource: str, *, pages: int, records: int, retries: int) -> None: ...

    def done(self, resource: str, *, status: str) -> None: ...


class NullProgress:
    """Progress that goes nowhere."""

    def update(self, resource: str, *, pages: int, records: int, retries: int) -> None:
        return None

    def done(self, resource: str, *, status: str) -> None:
        return None


@dataclass(frozen=True)
class ResourceOutcome:
    """How the scan of one resource ended (picklable: it crosses process boundaries)."""

    resource: str
    status: str
    reason: str | None
    pages: int
    records: int
    duplicates: int
    failed_pages: int
    rejects: int
    fatal: str | None = None  # auth refused or TLS failure: the whole run must stop


def resources_for(settings: Settings, *, payment_methods: bool = False) -> list[str]:
    """The resources a run extracts under these settings, in extraction order."""
    out = list(LISTED_RESOURCES)
    if payment_methods or settings.customer_ids:
        out.append("payment_methods")
    return out


def _call_row(record: Any) -> dict[str, Any]:
    if is_dataclass(record) and not isinstance(record, type):
        return asdict(record)
    if isinstance(record, Mapping):
        return dict(record)
    return dict(vars(record))


class _Attempts:
    """The client's attempt hook: buffers call records and counts retries per resource."""

    def __init__(self, buffer: CallBuffer) -> None:
        self.buffer = buffer
        self.retries: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, record: Any) -> None:
        row = _call_row(record)
        resource = row.get("resource") or "other"
        self.buffer.add(resource, row)
        if row.get("outcome") != "ok":
            with self._lock:
                self.retries[resource] = self.retries.get(resource, 0) + 1


def _outcome(landing: ResourceLanding, fatal: str | None = None) -> ResourceOutcome:
    st = landing.state
    return ResourceOutcome(
        resource=st.resource,
        status=st.status,
        reason=st.reason,
        pages=st.pages,
        records=st.records,
        duplicates=st.duplicates,
        failed_pages=len(st.failed_pages),
        rejects=st.rejects,
        fatal=fatal,
    )


def _failure_row(failure: Any) -> dict[str, Any]:
    row = _call_row(failure)
    return {k: (str(v) if isinstance(v, BaseException) else v) for k, v in row.items()}


def extract_resource(
    settings: Settings,
    landing: RunLanding,
    resource: str,
    *,
    client: ApiClient | None = None,
    progress: Progress | None = None,
    attempts: _Attempts | None = None,
    customer_ids: Sequence[str] = (),
    transport: Any = None,
) -> ResourceOutcome:
    """Page one resource to the end, landing batches as they come; resumable.

    With no `client`, builds its own from `settings` (as a Dask or Prefect worker does);
    a given client must report its attempts to the given `attempts` hook.
    """
    progress = progress or NullProgress()
    own_client = client is None
    if client is None or attempts is None:
        attempts = _Attempts(CallBuffer())
        client = ApiClient(
            ClientConfig.from_settings(settings), on_attempt=attempts, transport=transport
        )
    buffer = attempts.buffer
    rl = landing.resource(resource, batch_records=settings.landing_batch_records)
    if rl.state.done:
        return _outcome(rl)
    try:
        if resource == "payment_methods":
            return _extract_payment_methods(
                landing, rl, client, customer_ids, buffer, attempts, progress
            )
        rl.drain_calls = lambda: buffer.drain(resource)
        seen = rl.landed_ids()
        scan = client.scan(resource, start_offset=rl.state.next_offset, seen_ids=seen)
        known_failures = 0
        try:
            for page in scan:
                failures = scan.report.failed_pages
                for failure in failures[known_failures:]:
                    rl.record_failed_page(_failure_row(failure))
                known_failures = len(failures)
                rl.add_page(
                    offset=page.offset,
                    next_offset=page.next_offset,
                    records=page.records,
                    request_id=page.request_id,
                )
                progress.update(
                    resource,
                    pages=rl.state.pages + rl.pending_pages,
                    records=rl.state.records + rl.pending_records,
                    retries=attempts.retries.get(resource, 0),
                )
        except (AuthError, TransportError) as exc:
            if isinstance(exc, TransportError) and exc.retryable:
                raise
            rl.finish(status="failed", reason=str(exc), calls=buffer.drain(resource))
            progress.done(resource, status="failed")
            return _outcome(rl, fatal=str(exc))
        report = scan.report
        for failure in report.failed_pages[known_failures:]:
            rl.record_failed_page(_failure_row(failure))
        rl.state.duplicates += report.duplicates
        rl.finish(status=report.status, reason=report.reason, calls=buffer.drain(resource))
        progress.done(resource, status=report.status)
        return _outcome(rl)
    finally:
        if own_client:
            client.close()


def _extract_payment_methods(
    landing: RunLanding,
    rl: ResourceLanding,
    client: ApiClient,
    customer_ids: Sequence[str],
    buffer: CallBuffer,
    attempts: _Attempts,
    progress: Progress,
) -> ResourceOutcome:
    # Per-customer lists are short: a resumed run simply lists them all again.
    if rl.state.pages:
        shutil.rmtree(rl.folder)
        rl = landing.resource("payment_methods", batch_records=rl.batch_records)
    ids = list(customer_ids) or _customers_in_landing(landing)
    rl.drain_calls = lambda: buffer.drain("payment_methods")
    statuses: set[str] = set()
    reasons: list[str] = []
    duplicates = 0
    for cid in ids:
        scan = client.scan("payment_methods", customer_id=cid)
        for page in scan:
            rl.add_page(
                offset=page.offset,
                next_offset=page.next_offset,
                records=page.records,
                request_id=page.request_id,
                scope=page.customer_id or cid,
            )
            progress.update(
                "payment_methods",
                pages=rl.state.pages + rl.pending_pages,
                records=rl.state.records + rl.pending_records,
                retries=attempts.retries.get("payment_methods", 0),
            )
        for failure in scan.report.failed_pages:
            rl.record_failed_page({"customer_id": cid, **_failure_row(failure)})
        statuses.add(scan.report.status)
        duplicates += scan.report.duplicates
        if scan.report.reason:
            reasons.append(f"{cid}: {scan.report.reason}")
    status = "complete"
    for worse in ("unavailable", "incomplete"):
        if worse in statuses:
            status = worse
    if not ids:
        status, reasons = "skipped", ["no customer ids (set RECON_CUSTOMER_IDS)"]
    rl.state.duplicates += duplicates
    rl.finish(
        status=status, reason="; ".join(reasons) or None, calls=buffer.drain("payment_methods")
    )
    progress.done("payment_methods", status=status)
    return _outcome(rl)


def invoice_ids(settings: Settings, landing: RunLanding) -> list[str]:
    """Invoice ids to fetch one by one: the ids file, then ids other records reference."""
    ids: dict[str, None] = {}
    if settings.invoice_ids_file is not None:
        try:
            text = settings.invoice_ids_file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError("RECON_INVOICE_IDS_FILE", f"cannot be read: {exc.strerror}") from None
        for line in text.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                ids[line.strip()] = None
    others = [r for r in LISTED_RESOURCES if r != "invoices"]
    for iid in _referenced(landing, others, ("invoiceId", "latestInvoiceId")):
        ids[iid] = None
    return list(ids)


def fetch_invoices_by_id(
    settings: Settings,
    landing: RunLanding,
    client: ApiClient,
    attempts: _Attempts,
    progress: Progress,
) -> ResourceOutcome:
    """When no invoices list is offered, fetch the invoices we know of one by one.

    The resource stays `unavailable`: without a list nobody can say the set is complete,
    so the checks that need invoices are still not evaluated. What is fetched is kept.
    """
    rl = landing.resource("invoices", batch_records=settings.landing_batch_records)
    rl.drain_calls = lambda: attempts.buffer.drain("invoices")
    reason = rl.state.reason or "the invoices list is not offered"
    ids = invoice_ids(settings, landing)
    rl.state.done = False
    fetched = 0
    for n, iid in enumerate(ids):
        try:
            record = client.get_invoice(iid).raw
        except (AuthError, TransportError) as exc:
            if isinstance(exc, TransportError) and exc.retryable is False and exc.kind == "tls":
                raise
            if isinstance(exc, AuthError):
                raise
            rl.record_failed_page({"invoice_id": iid, "error": str(exc)})
            continue
        except ReconError as exc:
            rl.record_failed_page(
                {
                    "invoice_id": iid,
                    "error": str(exc),
                    "request_ids": [getattr(exc, "request_id", None)],
                }
            )
            continue
        rl.add_page(offset=n, next_offset=n + 1, records=[record], request_id=None)
        fetched += 1
        progress.update("invoices", pages=n + 1, records=fetched, retries=0)
    note = f"{reason}; {fetched} of {len(ids)} known invoice(s) fetched one by one"
    if not ids:
        note = f"{reason}; no invoice ids known (set RECON_INVOICE_IDS_FILE)"
    rl.finish(status="unavailable", reason=note, calls=attempts.buffer.drain("invoices"))
    progress.done("invoices", status="unavailable")
    return _outcome(rl)


def _referenced(landing: RunLanding, resources: Sequence[str], fields: Sequence[str]) -> list[str]:
    """Distinct string values of top-level `fields` in this run's landed `resources`."""
    import duckdb  # only needed here

    files = [
        str(p) for r in resources for p in landing.files(r, "batch") if pq.read_metadata(p).num_rows
    ]
    if not files:
        return []
    con = duckdb.connect()
    try:
        found: set[str] = set()
        for name in fields:
            path = f"$.{name}"
            rows = con.execute(
                "SELECT DISTINCT json_extract_string(raw, ?) FROM read_parquet(?) "
                "WHERE json_extract_string(raw, ?) IS NOT NULL",
                [path, files, path],
            ).fetchall()
            found.update(r[0] for r in rows)
        return sorted(found)
    finally:
        con.close()


def _customers_in_landing(landing: RunLanding) -> list[str]:
    """Customer ids referenced by this run's landed subscriptions and invoices."""
    return _referenced(landing, ("subscriptions", "invoices"), ("customerId",))


def extract_all(
    settings: Settings,
    landing: RunLanding,
    resources: Iterable[str],
    *,
    progress: Progress | None = None,
    transport: Any = None,
    on_fatal: Callable[[str], None] | None = None,
) -> list[ResourceOutcome]:
    """Extract every resource on up to `settings.concurrency` threads, one shared client.

    An auth refusal (or TLS failure) on any resource means the others are not started.
    """
    resources = list(resources)
    attempts = _Attempts(CallBuffer())
    shared = ApiClient(
        ClientConfig.from_settings(settings), on_attempt=attempts, transport=transport
    )
    outcomes: dict[str, ResourceOutcome] = {}
    stop = threading.Event()

    def one(resource: str) -> ResourceOutcome:
        if stop.is_set():
            rl = landing.resource(resource)
            rl.finish(status="skipped", reason="not started: the run was aborted", calls=())
            return _outcome(rl)
        out = extract_resource(
            settings, landing, resource, client=shared, attempts=attempts, progress=progress
        )
        if out.fatal:
            stop.set()
            if on_fatal:
                on_fatal(out.fatal)
        return out

    last = [r for r in resources if r == "payment_methods"]
    first = [r for r in resources if r != "payment_methods"]
    try:
        with ThreadPoolExecutor(max_workers=settings.concurrency) as pool:
            for out in pool.map(one, first):
                outcomes[out.resource] = out
        inv = outcomes.get("invoices")
        if inv is not None and inv.status == "unavailable" and not stop.is_set():
            outcomes["invoices"] = fetch_invoices_by_id(
                settings, landing, shared, attempts, progress or NullProgress()
            )
        for r in last:
            outcomes[r] = one(r)
    finally:
        shared.close()
    return [outcomes[r] for r in resources if r in outcomes]
