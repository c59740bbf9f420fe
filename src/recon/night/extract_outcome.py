"""What an extraction tells, apart from the loop that pages (recon.night.extract): each
resource's outcome (`ResourceOutcome`, and `Progress` as it goes), every attempt's call
record taken by the client's hook (`AttemptHook`: buffered for the landing, retries counted,
the credentials seen to work), and what the answers say of the base URL — every list
answering 404 is a wrong `RECON_BASE_URL`, not a night of unavailable lists.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, fields
from typing import Protocol

from recon.catalogue.models import CallRecord
from recon.catalogue.resources import api_list
from recon.config.settings import API_PREFIX, Settings
from recon.errors import ConfigError, redact_url
from recon.warehouse.landing import CallBuffer, ResourceLanding, RunLanding

__all__ = [
    "AttemptHook",
    "NullProgress",
    "Progress",
    "ResourceOutcome",
    "check_base_url",
    "outcome_of",
    "wrong_base_url",
]


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


def outcome_of(landing: ResourceLanding, fatal: str | None = None) -> ResourceOutcome:
    """The outcome its landing records of one resource (`fatal`: why the run must stop)."""
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


_CALL_FIELDS = tuple(f.name for f in fields(CallRecord))


class AttemptHook:
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
