"""Finish an incomplete night later: `recon nightly --retry-failed [RUN_ID]`.

A night that lost pages (a record the provider could not serve, an outage mid-run) is
published `incomplete` with every failed page in its landing (`state.json`: offset, request
ids). Once the provider is fixed, the operator finishes *that* night instead of running a
new one:

1. `resolve_retry`: the run (default: the newest incomplete one); refused when a newer run
   has been published over the same data (its records would be rewritten by older ones).
2. `refetch_failed`: each failed page's window is fetched again and landed into the run's
   own landing folder. A page and the removal of its failure are committed together (the
   batch file carries the state), so a `kill -9` at any point loses nothing and refetches
   at most the page in flight. A list that gave up early ("the rest of the list was not
   read") is paged on to its end; a list that was not offered and answers now is paged
   whole. Pages that still fail stay recorded, with the new ids.
3. `reload_run`: the run's changed resources are staged again from the whole landing and
   merged into the working copy under the same run id (the merge is idempotent: only what
   the retry added is new), the run's status is recomputed, the retry is recorded.
4. The checks run again for the run, the copy is published and the report re-rendered
   (`recon.night.nightly`), exactly as at the end of a night.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from recon.api import ApiClient, ClientConfig
from recon.catalogue.resources import api_list, nightly_resources
from recon.config.settings import Settings
from recon.errors import ConfigError
from recon.output.atomic import atomic_write_bytes
from recon.paging.scan import Page, Scan
from recon.runid import new_run_id
from recon.warehouse.database import open_readonly, transaction
from recon.warehouse.landing import CallBuffer, ResourceLanding, RunLanding
from recon.warehouse.working_copy import (
    Warehouse,
    define_load_macros,
    load_resource,
    mark_seen,
    run_status,
)

__all__ = ["RetryOutcome", "refetch_failed", "reload_run", "resolve_retry"]

_REST_UNREAD = "the rest of the list was not read"
_RETRIES_FILE = "retries.json"


def resolve_retry(settings: Settings, run_id: str | None) -> str:
    """The run `--retry-failed` finishes; a ConfigError naming why when it cannot be."""
    option = "--retry-failed"
    if not settings.db.exists():
        raise ConfigError(option, f"no warehouse at {settings.db}: nothing to retry")
    con = open_readonly(settings.db)
    try:
        if run_id in (None, "latest"):
            row = con.execute(
                "SELECT run_id FROM runs WHERE status = 'incomplete' "
                "ORDER BY started_at DESC LIMIT 1"
            ).fetchone()
            if row is None:
                raise ConfigError(option, f"no incomplete run in {settings.db}: nothing to retry")
            run_id = str(row[0])
        found = con.execute(
            "SELECT status, started_at FROM runs WHERE run_id = ?", [run_id]
        ).fetchone()
        if found is None:
            raise ConfigError(option, f"run {run_id} is not in the warehouse {settings.db}")
        status, started_at = found
        if status == "complete":
            raise ConfigError(option, f"run {run_id} is complete: nothing to retry")
        if status != "incomplete":
            raise ConfigError(
                option, f"run {run_id} was {status}, not incomplete: run the night again"
            )
        newer = con.execute(
            "SELECT run_id FROM runs WHERE started_at > ? ORDER BY started_at DESC LIMIT 1",
            [started_at],
        ).fetchone()
    finally:
        con.close()
    if newer is not None:
        raise ConfigError(
            option,
            f"run {newer[0]} was published after {run_id} over the same data: finishing "
            f"{run_id} now would put older records over newer ones; run the night again "
            "(recon nightly) instead",
        )
    if not RunLanding(settings.landing, run_id).exists:
        raise ConfigError(option, f"run {run_id} has no landing under {settings.landing}")
    return run_id


@dataclass
class RetryOutcome:
    """What one retry did: pages fetched again (with their new request ids), still failing."""

    run_id: str
    retry_id: str
    started_at: str
    fetched: list[dict[str, Any]] = field(default_factory=list)
    still_failing: list[dict[str, Any]] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    relisted: list[str] = field(default_factory=list)

    @property
    def request_ids(self) -> list[str]:
        return [str(p["request_id"]) for p in self.fetched if p.get("request_id")]


def refetch_failed(
    settings: Settings, run_id: str, *, transport: Any = None, retry_id: str | None = None
) -> RetryOutcome:
    """Fetch the run's failed pages again and land them into the run (kill-safe)."""
    landing = RunLanding(settings.landing, run_id)
    outcome = RetryOutcome(
        run_id, retry_id or new_run_id(), datetime.now(UTC).isoformat(timespec="seconds")
    )
    buffer = CallBuffer()
    client = _client(settings, buffer, transport)
    _recover_relists(landing)
    try:
        for resource, state in landing.states().items():
            if api_list(resource).per_customer:
                continue
            if state.status == "unavailable" and not _relist(client, landing, resource, outcome):
                continue  # the list is still not offered
            if state.done and not state.failed_pages and state.status != "unavailable":
                continue
            rl = landing.resource(resource, batch_records=settings.landing_batch_records)
            rl.drain_calls = functools.partial(buffer.drain, resource)
            if rl.state.done:
                _retry_resource(client, rl, outcome)
            else:  # a list relisted by a retry that was killed: page on where it stopped
                _page_on(client, rl, outcome)
            outcome.resources.append(resource)
            rl.finish(**_status_after(rl), calls=buffer.drain(resource))
    finally:
        client.close()
    _remember(landing, outcome)
    return outcome


def _client(settings: Settings, buffer: CallBuffer, transport: Any) -> ApiClient:
    """The API client of a retry; every attempt goes to the run's call log."""
    return ApiClient(
        ClientConfig.from_settings(settings),
        on_attempt=lambda record: buffer.add(record.resource, asdict(record)),
        transport=transport,
    )


def _window(client: ApiClient, rl: ResourceLanding, offset: int) -> Scan:
    """The list of `rl`'s resource read on from `offset`, knowing what is already landed."""
    return client.scan(rl.resource, start_offset=offset, seen_ids=rl.landed_ids())


def _retry_resource(client: ApiClient, rl: ResourceLanding, outcome: RetryOutcome) -> None:
    """Each failed window read again (`client.rescan`: the records it covers, narrowed
    again where they still fail); then, for a list that gave up early, the rest of the list
    from where the landed pages end."""
    for failure in sorted(rl.state.failed_pages, key=lambda f: int(f["offset"])):
        window = client.rescan(
            rl.resource,
            int(failure["offset"]),
            int(failure.get("limit") or client.config.page_size),
            before_id=failure.get("before_id"),
        )
        if window.shifted:  # the list moved since that night: the offsets mean other records
            why = "the list moved since that night (the record before it is gone)"
            _replace_failures(rl, failure, [{**failure, "error": why}], outcome)
            continue
        # What the window read and what still fails are committed together by one batch
        # file (kill -9 safe); the list's resume point stays where the night left it.
        for page in window.pages:
            if page.records:  # (a piece holding only the record before the window: nothing)
                _land(rl, page, outcome, next_offset=rl.state.next_offset, flush=False)
        _replace_failures(rl, failure, [asdict(f) for f in window.failed], outcome, save=False)
        rl.flush(always=True)
    if _REST_UNREAD in (rl.state.reason or "") and not rl.state.failed_pages:
        _page_on(client, rl, outcome)


def _page_on(client: ApiClient, rl: ResourceLanding, outcome: RetryOutcome) -> None:
    """Page the list from where `rl`'s landed pages end to its end."""
    scan = _window(client, rl, rl.state.next_offset)
    for page, failed in _pages(scan):
        if page is None:
            rl.record_failed_page(failed or {})
            outcome.still_failing.append(failed or {})
        else:
            _land(rl, page, outcome)
    rl.state.duplicates += scan.report.duplicates
    rl.state.reason = scan.report.reason


def _relist(client: ApiClient, landing: RunLanding, resource: str, outcome: RetryOutcome) -> bool:
    """A list that was not offered: does it answer now? Then its landing (records fetched
    one by one, if any) is set aside under `retired/`, and the list is paged from the start.

    Setting aside is one rename; the new folder is resumable like any extraction.
    """
    fresh = ResourceLanding(landing.folder / "retired" / "probe" / resource, resource)
    scan = _window(client, fresh, 0)
    first = next(iter(_pages(scan)), None)
    shutil.rmtree(fresh.folder.parent, ignore_errors=True)
    if first is None or first[0] is None or scan.report.status == "unavailable":
        return False
    retired = landing.folder / "retired" / f"{resource}-{outcome.retry_id}"
    retired.parent.mkdir(parents=True, exist_ok=True)
    os.replace(landing.folder / resource, retired)
    landing.resource(resource).save_state()  # a fresh list, resumable from offset 0
    outcome.relisted.append(resource)
    return True


def _recover_relists(landing: RunLanding) -> None:
    """A retry killed between setting a landing aside and starting the new one: start it."""
    for retired in sorted((landing.folder / "retired").glob("*-*")):
        resource = retired.name.split("-", 1)[0]
        if (
            resource in {r.name for r in nightly_resources()}
            and not (landing.folder / resource).exists()
        ):
            landing.resource(resource).save_state()


def _land(
    rl: ResourceLanding,
    page: Page,
    outcome: RetryOutcome,
    *,
    next_offset: int | None = None,
    flush: bool = True,
) -> None:
    rl.add_page(
        offset=page.offset,
        next_offset=page.next_offset if next_offset is None else next_offset,
        records=page.records,
        request_id=page.request_id,
    )
    if flush:
        rl.flush()
    outcome.fetched.append(
        {"resource": rl.resource, "offset": page.offset, "request_id": page.request_id}
    )


def _pages(scan: Scan) -> Iterator[tuple[Page | None, dict[str, Any] | None]]:
    """The scan's pages and failures in the order they happened."""
    known = 0
    for page in scan:
        failures = scan.report.failed_pages
        for failure in failures[known:]:
            yield None, asdict(failure)
        known = len(failures)
        yield page, None
    for failure in scan.report.failed_pages[known:]:
        yield None, asdict(failure)


def _replace_failures(
    rl: ResourceLanding,
    old: Mapping[str, Any],
    new: list[dict[str, Any]],
    outcome: RetryOutcome,
    *,
    save: bool = True,
) -> None:
    """`old` failure replaced by `new` ones (none: it was read), with this retry's id."""
    new = [{**f, "retried_by": outcome.retry_id} for f in new]
    pages = rl.state.failed_pages
    at = pages.index(dict(old))
    pages[at : at + 1] = new
    if save:
        rl.save_state()
    outcome.still_failing.extend(new)


def _status_after(rl: ResourceLanding) -> dict[str, Any]:
    st = rl.state
    if st.failed_pages:
        reason = st.reason if _REST_UNREAD in (st.reason or "") else None
        return {
            "status": "incomplete",
            "reason": reason or f"{len(st.failed_pages)} page(s) failed for good",
        }
    if _REST_UNREAD in (st.reason or ""):
        return {"status": "incomplete", "reason": st.reason}
    return {"status": "complete", "reason": None}  # every page of the list is landed


def _remember(landing: RunLanding, outcome: RetryOutcome) -> None:
    """Append this retry to the run's `retries.json` (what the report quotes later)."""
    path = landing.folder / _RETRIES_FILE
    done: list[dict[str, Any]] = orjson.loads(path.read_bytes()) if path.exists() else []
    done.append(
        {
            "retry_id": outcome.retry_id,
            "started_at": outcome.started_at,
            "fetched": outcome.fetched,
            "still_failing": len(outcome.still_failing),
        }
    )
    atomic_write_bytes(path, orjson.dumps(done, option=orjson.OPT_INDENT_2), durable=True)


def retries_of(landing: RunLanding) -> list[dict[str, Any]]:
    """Every retry of the run so far, oldest first."""
    path = landing.folder / _RETRIES_FILE
    data: list[dict[str, Any]] = orjson.loads(path.read_bytes()) if path.exists() else []
    return data


def reload_run(settings: Settings, run_id: str, resources: list[str] | None = None) -> str:
    """Load the run's landing again into the working copy, under the same run id.

    Every resource the retry touched (default: every resource that is not complete in the
    warehouse) is staged whole and merged: what was landed before is unchanged, what the
    retry added is new, and a list that is complete now can at last say what is gone.
    Returns the run's status after.
    """
    landing = RunLanding(settings.landing, run_id)
    states = landing.states()
    wh = Warehouse(settings.db, settings.duckdb_memory_limit)
    with wh.session(run_id, fresh=True, publish=False) as con:
        if resources is None:
            resources = [
                r[0]
                for r in con.execute(
                    "SELECT resource FROM resource_scans WHERE run_id = ? AND status <> 'complete'",
                    [run_id],
                ).fetchall()
            ]
        status, reason = run_status(states)
        retries = retries_of(landing)
        if status == "complete" and retries:
            reason = _completed_later(retries)
        define_load_macros(con)
        with transaction(con):
            for resource in [r for r in resources if r in states]:
                before = con.execute(
                    "SELECT new_records, changed_records FROM resource_scans "
                    "WHERE run_id = ? AND resource = ?",
                    [run_id, resource],
                ).fetchone() or (0, 0)
                for table in ("rejects", "api_calls"):
                    con.execute(
                        f"DELETE FROM {table} WHERE run_id = ? AND resource = ?",  # noqa: S608
                        [run_id, resource],
                    )
                load_resource(con, landing, resource, states[resource], settings.fields)
                con.execute(
                    "UPDATE resource_scans SET new_records = new_records + ?, "
                    "changed_records = changed_records + ? WHERE run_id = ? AND resource = ?",
                    [before[0], before[1], run_id, resource],
                )
            con.execute(
                "UPDATE runs SET status = ?, reason = ? WHERE run_id = ?", [status, reason, run_id]
            )
            for retry in retries:  # run_retries: sql/migrations/0003_run_retries.sql
                con.execute(
                    "INSERT OR REPLACE INTO run_retries (run_id, retry_id, started_at, "
                    "pages_fetched, still_failing, request_ids) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        run_id,
                        retry["retry_id"],
                        retry["started_at"],
                        len(retry["fetched"]),
                        retry["still_failing"],
                        [p["request_id"] for p in retry["fetched"] if p.get("request_id")],
                    ],
                )
        mark_seen(con, landing, [r for r in resources if r in states])
    return status


def _completed_later(retries: list[dict[str, Any]]) -> str:
    """The run's reason once a retry completed it: by which retry, with the new ids."""
    last = retries[-1]
    ids = [p["request_id"] for r in retries for p in r["fetched"] if p.get("request_id")]
    pages = sum(len(r["fetched"]) for r in retries)
    shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
    return (
        f"completed later by retry {last['retry_id']} (recon nightly --retry-failed, "
        f"{last['started_at']}): {pages} page(s) fetched again, request ids {shown or 'none'}"
    )
