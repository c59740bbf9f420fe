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
from dataclasses import asdict
from typing import Any

from recon import logs
from recon.api import ApiClient, ClientConfig
from recon.catalogue.resources import api_list, api_resources, nightly_resources
from recon.config.settings import Settings
from recon.errors import AuthError, ReconError, TransportError
from recon.night.extract_outcome import (
    AttemptHook,
    NullProgress,
    Progress,
    ResourceOutcome,
    check_base_url,
    outcome_of,
    wrong_base_url,
)
from recon.night.known_ids import customers_in_landing, ids_to_fetch
from recon.warehouse.landing import CallBuffer, ResourceLanding, ResourceState, RunLanding
from recon.warehouse.memory import release

__all__ = [
    "LISTED_RESOURCES",
    "NullProgress",
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


def resources_for(settings: Settings, *, payment_methods: bool = False) -> list[str]:
    """The resources a run extracts under these settings, in extraction order."""
    out = list(LISTED_RESOURCES)
    if payment_methods or settings.customer_ids:
        out += [r.name for r in api_resources() if api_list(r.name).per_customer]
    return out


def extract_resource(
    settings: Settings,
    landing: RunLanding,
    resource: str,
    *,
    client: ApiClient | None = None,
    progress: Progress | None = None,
    attempts: AttemptHook | None = None,
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
        attempts = AttemptHook(CallBuffer())
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
        return outcome_of(rl)
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
    attempts: AttemptHook,
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
    attempts: AttemptHook,
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
        return outcome_of(rl, fatal=str(exc))
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
    return outcome_of(rl)


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
    attempts = AttemptHook(CallBuffer())
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
            return outcome_of(rl)
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
