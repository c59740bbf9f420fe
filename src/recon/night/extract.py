"""Extract: page every listable resource and land each batch before going on.

The unit of work is one resource (`extract_resource`), so that the Prefect flow can map it
over a Dask cluster, where each unit builds its own client from settings read inside it
(secrets never travel as arguments). `extract_all` runs the resources on local threads
sharing one client, hence one rate limiter. Each unit writes only under its own landing
folder.
"""

from __future__ import annotations

import contextvars
import logging
import shutil
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields
from typing import Any, Protocol

from recon import logs
from recon.api import ApiClient, CallRecord, ClientConfig
from recon.catalogue.resources import api_list, api_resources, nightly_resources
from recon.config.settings import API_PREFIX, Settings
from recon.errors import AuthError, ConfigError, ReconError, TransportError, redact_url
from recon.night.known_ids import customers_in_landing, ids_to_fetch
from recon.warehouse.landing import (
    CallBuffer,
    ResourceLanding,
    ResourceState,
    RunLanding,
)
from recon.warehouse.memory import release

__all__ = [
    "LISTED_RESOURCES",
    "Progress",
    "ResourceOutcome",
    "check_base_url",
    "extract_all",
    "extract_resource",
    "resources_for",
    "wrong_base_url",
]

# Every list a nightly run pages (the API offers it, or is assumed to), in extraction order;
# per-customer lists (payment methods) come last, on request.
log = logging.getLogger("recon.extract")

LISTED_RESOURCES = tuple(r.name for r in nightly_resources())

#: Set when the night is being stopped (SIGTERM through Prefect's TerminationSignal, a
#: Ctrl-C): every scan lands what it holds and stops after its current page, so that the
#: process ends within seconds and `--resume` goes on from there (issue 25.6).
STOPPING = threading.Event()


class StoppedError(ReconError):
    """The night was stopped (SIGTERM, Ctrl-C) while extracting; its landed pages are kept."""


class Progress(Protocol):
    """Receives progress per resource (a rich display, log lines, or nothing)."""

    def update(
        self,
        resource: str,
        *,
        pages: int,
        records: int,
        retries: int,
        in_flight: int = 0,
        limit: int = 1,
    ) -> None: ...

    def done(self, resource: str, *, status: str) -> None: ...


class NullProgress:
    """Progress that goes nowhere."""

    def update(
        self,
        resource: str,
        *,
        pages: int,
        records: int,
        retries: int,
        in_flight: int = 0,
        limit: int = 1,
    ) -> None:
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
        out += [r.name for r in api_resources() if api_list(r.name).per_customer]
    return out


_CALL_FIELDS = tuple(f.name for f in fields(CallRecord))


class _Attempts:
    """The client's attempt hook: buffers call records and counts retries per resource."""

    def __init__(self, buffer: CallBuffer) -> None:
        self.buffer = buffer
        self.retries: dict[str, int] = {}
        self._lock = threading.Lock()
        # Set once the API has answered anything but 401/403: the credentials work.
        self.accepted = threading.Event()
        # What each resource's attempts answered, and one 404's call: a base URL under which
        # every list answers 404 is a wrong setting, not a night of unavailable lists.
        self.answered: dict[str, set[int | None]] = {}
        self.a_404: str | None = None  # the path of one

    def __call__(self, record: CallRecord) -> None:
        # A flat copy: `asdict` deep-copies every value (the timestamp too), per attempt.
        row = {name: getattr(record, name) for name in _CALL_FIELDS}
        resource = record.resource
        if record.http_status is not None and record.http_status not in (401, 403):
            self.accepted.set()
        self.buffer.add(resource, row)
        with self._lock:
            self.answered.setdefault(resource, set()).add(record.http_status)
            if record.http_status == 404 and self.a_404 is None:
                self.a_404 = record.path
            if record.outcome != "ok":
                self.retries[resource] = self.retries.get(resource, 0) + 1

    def every_list_404(self) -> bool:
        """Two lists or more were asked for, and every answer of every one was a 404."""
        with self._lock:
            seen = [statuses for statuses in self.answered.values() if statuses]
        return len(seen) >= 2 and all(statuses == {404} for statuses in seen)


def check_base_url(settings: Settings, landing: RunLanding) -> None:
    """A run extracted elsewhere (one task per resource on Dask workers): its landing says
    whether every list answered 404 only (`wrong_base_url`). Reads the call logs only when
    every list of the run is unavailable: nothing for an ordinary night."""
    import pyarrow.parquet as pq

    states = landing.states()
    lists = [r for r in states if not api_list(r).per_customer]
    if len(lists) < 2 or any(states[r].status != "unavailable" for r in lists):
        return
    statuses: set[int | None] = set()
    example: str | None = None
    for resource in lists:
        for path in landing.files(resource, "calls"):
            calls = pq.read_table(path, columns=["path", "http_status"]).to_pydict()
            statuses.update(calls["http_status"])
            example = example or next(iter(calls["path"]), None)
    if statuses == {404}:
        raise wrong_base_url(settings, example)


def wrong_base_url(settings: Settings, example: str | None) -> ConfigError:
    """Every list answered 404: the base URL points at the wrong place (a path too many or
    too few), which no request id quoted to the provider will fix."""
    asked = f" (e.g. GET {example})" if example else ""
    return ConfigError(
        "RECON_BASE_URL",
        f"every list under {redact_url(settings.api_root)} answered 404 Not Found{asked}: "
        "set the service's base address (e.g. https://payments.example.com); recon appends "
        f"{API_PREFIX}/…",
    )


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
    batch_records: int | None = None,
) -> ResourceOutcome:
    """Page one resource to the end, landing batches as they come; resumable.

    With no `client`, builds its own from `settings` (as a Dask or Prefect worker does);
    a given client must report its attempts to the given `attempts` hook. `batch_records`
    (default `RECON_LANDING_BATCH_RECORDS`): records buffered before a batch is landed.
    """
    batch_records = batch_records or settings.landing_batch_records
    progress = progress or NullProgress()
    own_client = client is None
    if client is None or attempts is None:
        attempts = _Attempts(CallBuffer())
        client = ApiClient(
            ClientConfig.from_settings(settings), on_attempt=attempts, transport=transport
        )
    rl = landing.resource(resource, batch_records=batch_records)
    dropped = rl.drop_unreadable()  # a batch damaged on disk: its pages are fetched again
    if dropped is not None:
        log.warning(
            "%s: landed batch %s cannot be read (%s): fetching its pages again", resource, *dropped
        )
    if rl.state.done:
        return _outcome(rl)
    try:
        if api_list(resource).per_customer:
            if rl.state.pages:  # per-customer lists are short: a resumed run lists them again
                shutil.rmtree(rl.folder)
                rl = landing.resource(resource, batch_records=batch_records)
            ids = list(customer_ids or settings.customer_ids) or customers_in_landing(landing)
            scans = [client.scan(resource, customer_id=cid) for cid in ids]
            return _land(rl, scans, attempts, progress, client, none_reason="no customer ids known")
        scan = client.scan(resource, start_offset=rl.state.next_offset, seen_ids=rl.landed_ids())
        scan.paginator.expected_end = _previous_length(landing, resource)
        return _land(rl, [scan], attempts, progress, client)
    finally:
        if own_client:
            client.close()


def _previous_length(landing: RunLanding, resource: str, *, runs: int = 3) -> int | None:
    """How long the list was at the end of the newest earlier complete scan of it (from its
    landed state.json; None when no recent run read it whole)."""
    root = landing.folder.parent
    earlier = sorted((p.name for p in root.glob("*T*Z-*") if p.name < landing.run_id), reverse=True)
    for run_id in earlier[:runs]:
        try:
            state = ResourceState.from_json((root / run_id / resource / "state.json").read_bytes())
        except (OSError, ValueError, TypeError):
            continue
        if state.status == "complete":
            return state.records + state.duplicates
    return None


def fetch_by_id(
    settings: Settings,
    landing: RunLanding,
    resource: str,
    client: ApiClient,
    attempts: _Attempts,
    progress: Progress,
) -> ResourceOutcome:
    """When a list is not offered, fetch the records we know of one by one (e.g. invoices).

    The resource stays `unavailable`: without a list nobody can say the set is complete,
    so the checks that need it are still not evaluated. What is fetched is kept.
    """
    rl = landing.resource(resource, batch_records=settings.landing_batch_records)
    listed = rl.state.reason or f"the {resource} list is not offered"
    ids = ids_to_fetch(settings, landing, resource)
    rl.state.done = False
    scan = client.scan_by_ids(resource, ids, seen_ids=rl.landed_ids())
    return _land(rl, [scan], attempts, progress, client, unavailable=listed)


def _land(
    rl: ResourceLanding,
    scans: Sequence[Any],
    attempts: _Attempts,
    progress: Progress,
    client: ApiClient,
    *,
    none_reason: str | None = None,
    unavailable: str | None = None,
) -> ResourceOutcome:
    """Drive scans into one resource's landing; record failures as they happen; finish it.

    An auth refusal or TLS failure ends the resource `failed` and marks the outcome fatal.
    With `unavailable`, records are kept but the resource stays unavailable (no list).
    """
    resource = rl.resource
    rl.drain_calls = lambda: attempts.buffer.drain(resource)
    statuses: list[str] = []
    reasons: list[str] = []
    try:
        for scan in scans:
            known = 0
            for page in scan:
                known = _note_failures(rl, scan.report.failed_pages, known)
                rl.add_page(
                    offset=page.offset,
                    next_offset=page.next_offset,
                    records=page.records,
                    request_id=page.request_id,
                    scope=page.customer_id,
                    landable=page.landable,
                )
                if STOPPING.is_set():  # land what is held; resume goes on from here
                    _note_failures(rl, scan.report.failed_pages, known)
                    rl.flush()
                    raise StoppedError(f"{resource}: stopped after {rl.state.pages} pages")
                progress.update(
                    resource,
                    pages=rl.state.pages + rl.pending_pages,
                    records=rl.state.records + rl.pending_records,
                    retries=attempts.retries.get(resource, 0),
                    in_flight=client.sender.in_flight(resource),
                    limit=client.gate.limit,
                )
            report = scan.report
            _note_failures(rl, report.failed_pages, known)
            rl.state.duplicates += report.duplicates
            statuses.append(report.status)
            prefix = f"{report.customer_id}: " if report.customer_id else ""
            if report.reason:
                reasons.append(prefix + report.reason)
            if getattr(report, "missing", None):
                reasons.append(f"{len(report.missing)} not found")
    except (AuthError, TransportError) as exc:  # anything else is a failed page in the scan
        rl.finish(status="failed", reason=str(exc), calls=attempts.buffer.drain(resource))
        progress.done(resource, status="failed")
        return _outcome(rl, fatal=str(exc))
    status = next((s for s in ("unavailable", "incomplete") if s in statuses), "complete")
    if not scans:
        status, reasons = "skipped", [none_reason or "nothing to fetch"]
    if unavailable is not None:
        fetched = f"{rl.state.records + rl.pending_records} fetched one by one"
        status, reasons = "unavailable", [unavailable, fetched, *reasons]
    rl.finish(
        status=status, reason="; ".join(reasons) or None, calls=attempts.buffer.drain(resource)
    )
    progress.done(resource, status=status)
    return _outcome(rl)


def _note_failures(rl: ResourceLanding, failures: Sequence[Any], known: int) -> int:
    """Persist failed pages not yet recorded; returns how many are recorded now."""
    for failure in failures[known:]:
        rl.record_failed_page(asdict(failure))
    return len(failures)


def _fetched_after(out: ResourceOutcome) -> bool:
    """An unlisted resource whose records are fetched one by one after every list ended."""
    return out.status == "unavailable" and api_list(out.resource).fetched_one_by_one_when_unlisted


#: The smallest landed batch when lists share the buffer (a batch is one fsync'd file).
_MIN_BATCH_RECORDS = 2_000


def extract_all(
    settings: Settings,
    landing: RunLanding,
    resources: Iterable[str],
    *,
    progress: Progress | None = None,
    transport: Any = None,
    on_fatal: Callable[[str], None] | None = None,
    on_final: Callable[[str], None] | None = None,
) -> list[ResourceOutcome]:
    """Extract every resource on its own thread, one shared client (issue 10).

    The client's gate bounds the requests in flight, all resources together: found while
    paging with `RECON_CONCURRENCY=auto`, else that number (1: one resource at a time, one
    page at a time). An auth refusal (or TLS failure) on any resource means the others are
    not started. `on_final(resource)` is called (on the resource's thread) once nothing more
    will be landed for it in this run: its landing can be loaded (recon.night.early).
    """
    resources = list(resources)
    STOPPING.clear()
    attempts = _Attempts(CallBuffer())
    shared = ApiClient(
        ClientConfig.from_settings(settings), on_attempt=attempts, transport=transport
    )
    outcomes: dict[str, ResourceOutcome] = {}
    stop = threading.Event()

    def one(resource: str) -> ResourceOutcome:
        if resource != opener:  # wait until the first answer shows the credentials work
            while not (attempts.accepted.wait(0.05) or stop.is_set() or opened.is_set()):
                pass
        try:
            return started(resource)
        finally:
            if resource == opener:
                opened.set()

    parent = contextvars.copy_context()  # the step's log fields (run_id, …), for each thread

    def in_context(resource: str) -> ResourceOutcome:
        return parent.copy().run(one, resource)

    def started(resource: str) -> ResourceOutcome:
        with logs.context(resource=resource):
            return _started(resource)

    def _started(resource: str) -> ResourceOutcome:
        if stop.is_set():
            rl = landing.resource(resource)
            rl.finish(status="skipped", reason="not started: the run was aborted", calls=())
            return _outcome(rl)
        out = extract_resource(
            settings,
            landing,
            resource,
            client=shared,
            attempts=attempts,
            progress=progress,
            batch_records=per_batch,
        )
        if out.fatal:
            stop.set()
            if on_fatal:
                on_fatal(out.fatal)
        elif on_final and not _fetched_after(out):
            on_final(resource)
        return out

    last = [r for r in resources if api_list(r).per_customer]
    first = [r for r in resources if r not in last]
    opener = first[0] if first else None
    opened = threading.Event()  # the opener ended (its first answer may never have come)
    try:
        fixed = settings.concurrency
        threads = len(first) if fixed == "auto" else min(int(fixed), len(first))
        # The landing buffers of every list in flight share RECON_LANDING_BATCH_RECORDS, so
        # extraction's memory does not grow with the number of lists paged at once.
        per_batch = max(_MIN_BATCH_RECORDS, settings.landing_batch_records // max(1, threads))
        pool = ThreadPoolExecutor(max_workers=max(1, threads))
        try:
            for out in pool.map(in_context, first):
                outcomes[out.resource] = out
            if attempts.every_list_404():
                raise wrong_base_url(settings, attempts.a_404)
        except BaseException:  # SIGTERM (Prefect's TerminationSignal), Ctrl-C, a bug
            STOPPING.set()  # every scan stops after its page: never wait out the night
            stop.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        for r, out in list(outcomes.items()):
            if _fetched_after(out) and not stop.is_set():
                outcomes[r] = fetch_by_id(
                    settings, landing, r, shared, attempts, progress or NullProgress()
                )
                if on_final and not outcomes[r].fatal:
                    on_final(r)
        for r in last:
            outcomes[r] = one(r)
    finally:
        shared.close()
        release()  # pages and buffers freed on six threads' arenas: back to the OS
    return [outcomes[r] for r in resources if r in outcomes]
