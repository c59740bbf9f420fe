"""Raw landing: every fetched page batch is written as Parquet before anything else happens.

Layout under `<landing root>/<run_id>/` (docs/architecture.md):

    run.json                               the run's identity (no secrets)
    <resource>/batch-<seq:06d>.parquet     id, raw (JSON text), page_offset, request_id
    <resource>/rejects-<seq:06d>.parquet   records that cannot be keyed, with the reason
    <resource>/calls-<seq:06d>.parquet     every HTTP attempt since the previous batch
    <resource>/state.json                  where paging goes on from; rewritten atomically

A batch file is written under a temporary name and renamed, then `state.json` is replaced,
so a `kill -9` at any point leaves either a batch with its state or neither: a resumed run
refetches at most the one batch that was in flight.
"""

from __future__ import annotations

import os
import threading
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from recon.output.atomic import atomic_path, atomic_write_bytes
from recon.paging.records import Landable
from recon.paging.records import landable as landable_of
from recon.runid import RUN_ID, check_run_id

__all__ = [
    "CALL_COLUMNS",
    "CallBuffer",
    "ResourceLanding",
    "ResourceState",
    "RunLanding",
]

PAGE_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("raw", pa.string()),
        ("page_offset", pa.int64()),
        ("request_id", pa.string()),
        ("scope", pa.string()),  # the customer id of a payment-methods page, else NULL
    ]
)
_REJECT_SCHEMA = pa.schema(
    [
        ("raw", pa.string()),
        ("reason", pa.string()),
        ("page_offset", pa.int64()),
        ("request_id", pa.string()),
    ]
)
CALL_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("call_id", pa.string()),
    ("resource", pa.string()),
    ("method", pa.string()),
    ("path", pa.string()),
    ("query", pa.string()),
    ("attempt", pa.int32()),
    ("http_status", pa.int32()),
    ("error", pa.string()),
    ("message", pa.string()),
    ("request_id", pa.string()),
    ("latency_ms", pa.float64()),
    ("outcome", pa.string()),
    ("at", pa.timestamp("us", tz="UTC")),
    ("waited_ms", pa.float64()),
)
_CALL_SCHEMA = pa.schema(list(CALL_COLUMNS))


_STATE_KEY = b"recon.state"
#: A batch is written before its raw column reaches Arrow's 2 GiB string limit.
_MAX_RAW_BYTES = 1 << 30


def _committed(batch: Path) -> bytes | None:
    """The state a batch file committed (its metadata); None if its footer cannot be read."""
    try:
        meta = pq.read_schema(batch).metadata or {}
    except (OSError, ValueError, pa.ArrowException):
        return None
    value = meta.get(_STATE_KEY)
    return bytes(value) if value else None


def _seq(path: Path) -> int:
    """The sequence number in `batch-000012.parquet`, `calls-000012-4711.parquet`, …"""
    return int(path.stem.split("-")[1])


def _write_bytes(path: Path, data: bytes) -> None:
    """Landing's files survive a power cut: fsync'd, renamed, the folder fsync'd."""
    atomic_write_bytes(path, data, durable=True)


def _write_table(table: pa.Table, path: Path) -> None:
    with atomic_path(path, durable=True) as tmp:
        # Landing is read once by the loader on the same machine: speed over size.
        # Page checksums: a batch damaged on disk is found (`unreadable`), never loaded.
        pq.write_table(
            table,
            tmp,
            compression="none",
            use_dictionary=False,
            write_statistics=False,
            write_page_checksum=True,
        )


def unreadable(path: Path) -> str | None:
    """Why the landed Parquet file `path` cannot be read whole (None: it can), its page
    checksums verified."""
    try:
        pq.read_table(path, page_checksum_verification=True)
    except (OSError, ValueError, pa.ArrowException) as exc:
        return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "number", float: "number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _reject_reason(rec: Any) -> str:
    """Why a record cannot be keyed (it is kept in `rejects` with this reason)."""
    if not isinstance(rec, dict):
        return f"record is a JSON {_json_type(rec)}, not an object"
    rid = rec.get("id")
    if rid is None:
        return "record has no id"
    if not isinstance(rid, str):
        return f"id is a JSON {_json_type(rid)}, not a string"
    return "id is empty"


@dataclass
class ResourceState:
    """Where paging of one resource stands; persisted as state.json."""

    resource: str
    next_offset: int = 0
    pages: int = 0
    records: int = 0
    duplicates: int = 0
    rejects: int = 0
    batches: int = 0
    done: bool = False
    status: str = "running"  # running | complete | incomplete | unavailable | skipped
    reason: str | None = None
    failed_pages: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self), option=orjson.OPT_INDENT_2)

    @classmethod
    def from_json(cls, data: bytes) -> ResourceState:
        return cls(**orjson.loads(data))


class CallBuffer:
    """Thread-safe collector of call records, drained per resource into landing files."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[str, list[Mapping[str, Any]]] = {}

    def add(self, resource: str, row: Mapping[str, Any]) -> None:
        with self._lock:
            self._rows.setdefault(resource, []).append(row)

    def drain(self, resource: str) -> list[Mapping[str, Any]]:
        with self._lock:
            return self._rows.pop(resource, [])


class ResourceLanding:
    """Lands one resource's pages in batches and keeps its resumable state."""

    def __init__(self, folder: Path, resource: str, *, batch_records: int = 20_000) -> None:
        self.folder = folder
        self.resource = resource
        self.batch_records = batch_records
        folder.mkdir(parents=True, exist_ok=True)
        self.state = self._recover_state()
        self._ids: list[str] = []
        # Each record's JSON bytes end to end, and where each ends: the raw column is built
        # from these two buffers as they are, without a Python string per record.
        self._raw = bytearray()
        self._raw_ends = array("i", [0])
        self._offsets: list[int] = []
        self._rids: list[str | None] = []
        self._scopes: list[str | None] = []
        self._rejects: list[tuple[str, str, int, str | None]] = []
        self._pending_pages = 0
        self._pending_next_offset = self.state.next_offset
        # Where call records come from at each flush (set by extraction).
        self.drain_calls: Callable[[], Sequence[Mapping[str, Any]]] = lambda: ()

    def _recover_state(self) -> ResourceState:
        """The state as of the newest batch file: the batch, not state.json, is the commit.

        A kill between a batch's rename and the state.json update leaves state.json one
        batch behind; the batch's own metadata carries the state it committed. Reject and
        call files of a flush whose batch never landed are dropped or kept aside (their
        pages are fetched again).
        """
        state_file = self.folder / "state.json"
        state = (
            ResourceState.from_json(state_file.read_bytes())
            if state_file.exists()
            else ResourceState(resource=self.resource)
        )
        batches = sorted(self.folder.glob("batch-*.parquet"))
        if batches:
            committed = _committed(batches[-1])
            if committed:
                newest = ResourceState.from_json(committed)
                if newest.batches > state.batches:
                    state = newest
                    self.save_state_of(state)
        for orphan in self.folder.glob("rejects-*.parquet"):
            if _seq(orphan) >= state.batches:
                orphan.unlink()
        return state

    def drop_unreadable(self) -> tuple[Path, str] | None:
        """Roll the landing back to before its first batch that cannot be read (damaged on
        disk): that batch and every later one are removed and the state is the one the
        batch before committed, so a resumed scan fetches their pages again. Returns the
        batch and why it could not be read; None when every batch reads."""
        batches = sorted(self.folder.glob("batch-*.parquet"))
        for i, batch in enumerate(batches):
            why = unreadable(batch)
            if why is None:
                continue
            before = _committed(batches[i - 1]) if i else None
            state = (
                ResourceState.from_json(before) if before else ResourceState(resource=self.resource)
            )
            first = _seq(batch)
            for later in batches[i:]:
                later.unlink()
            for rejects in self.folder.glob("rejects-*.parquet"):
                if _seq(rejects) >= first:
                    rejects.unlink()
            self.state = state
            self._pending_next_offset = state.next_offset
            self.save_state_of(state)
            return batch, why
        return None

    @property
    def pending_pages(self) -> int:
        """Pages buffered but not yet written."""
        return self._pending_pages

    @property
    def pending_records(self) -> int:
        """Records buffered but not yet written."""
        return len(self._ids)

    def landed_ids(self, limit: int = 100_000) -> list[str]:
        """The newest ids already landed by earlier attempts of this run (for resume).

        A resumed scan needs the records just before its start (its overlap anchor and
        near duplicates), not the whole list: older duplicates are dropped at load.
        """
        ids: list[str] = []
        for f in sorted(self.folder.glob("batch-*.parquet"), reverse=True):
            if len(ids) >= limit:
                break
            ids.extend(pq.read_table(f, columns=["id"]).column("id").to_pylist())
        return ids

    def add_page(
        self,
        *,
        offset: int,
        next_offset: int | None,
        records: Sequence[Any],
        request_id: str | None,
        duplicates: int = 0,
        scope: str | None = None,
        landable: Landable | None = None,
    ) -> None:
        """Buffer one page; write a batch when enough records are waiting.

        `landable`: the same records' ids and JSON text, as the scan made them (landed as
        they are, without writing each record back to JSON here)."""
        ids, raw = self._ids, self._raw
        before = len(ids)
        if landable is None or len(landable) != len(records):
            landable = landable_of(records)  # a page the scan made none for (refetch, by id)
        self._add_landable(landable, records, offset, request_id)
        added = len(ids) - before
        self._offsets.extend([offset] * added)
        self._rids.extend([request_id] * added)
        self._scopes.extend([scope] * added)
        self._pending_pages += 1
        # None: the list ended here; a resume would start past this page.
        self._pending_next_offset = (
            next_offset if next_offset is not None else offset + len(records)
        )
        self.state.duplicates += duplicates
        if len(ids) + len(self._rejects) >= self.batch_records or len(raw) >= _MAX_RAW_BYTES:
            self.flush()

    def _add_landable(
        self, landable: Landable, records: Sequence[Any], offset: int, request_id: str | None
    ) -> None:
        """Buffer a page's records from their ids and JSON text (the hot path of extraction);
        those that cannot be keyed go to the rejects with the reason."""
        ids = landable.ids
        if not (landable.unkeyed or landable.blank):
            base = len(self._raw)  # every record keyed (the usual page): its text in one copy
            self._raw += landable.raw
            self._raw_ends.extend([end + base for end in landable.ends[1:]])
            self._ids.extend(cast("list[str]", ids))
            return
        for i, rid in enumerate(ids):
            if rid is not None and not rid.isspace():
                self._raw += landable.text(i)
                self._raw_ends.append(len(self._raw))
                self._ids.append(rid)
            else:
                reason = (landable.problems or {}).get(i) or _reject_reason(records[i])
                self._rejects.append((landable.text(i).decode(), reason, offset, request_id))

    def record_failed_page(self, failure: Mapping[str, Any]) -> None:
        """Remember a page that failed for good (kept in state.json)."""
        self.state.failed_pages.append(dict(failure))

    def flush(
        self, calls: Sequence[Mapping[str, Any]] | None = None, *, always: bool = False
    ) -> None:
        """Write buffered pages (and call records) and advance the persisted state.

        Every flush writes a batch file (possibly empty) whose metadata holds the state it
        commits, so a finished resource always has one and resume can trust it.
        """
        if calls is None:
            calls = self.drain_calls()
        if not (self._ids or self._rejects or calls or self._pending_pages or always):
            return
        seq = self.state.batches
        # Rejects and calls first; the batch file last, carrying the new state: it commits.
        if self._rejects:
            cols = list(zip(*self._rejects, strict=True))
            table = pa.table([list(c) for c in cols], schema=_REJECT_SCHEMA)
            _write_table(table, self.folder / f"rejects-{seq:06d}.parquet")
        if calls:
            # Unique per process: a resumed run never overwrites a killed one's call log.
            write_calls(calls, self.folder / f"calls-{seq:06d}-{os.getpid()}.parquet")
        self.state.records += len(self._ids)
        self.state.rejects += len(self._rejects)
        self.state.pages += self._pending_pages
        self.state.next_offset = self._pending_next_offset
        self.state.batches += 1
        raws = pa.StringArray.from_buffers(
            len(self._ids), pa.py_buffer(self._raw_ends), pa.py_buffer(self._raw)
        )
        table = pa.table(
            [self._ids, raws, self._offsets, self._rids, self._scopes], schema=PAGE_SCHEMA
        ).replace_schema_metadata({_STATE_KEY: self.state.to_json()})
        _write_table(table, self.folder / f"batch-{seq:06d}.parquet")
        self._ids, self._offsets, self._rids, self._scopes = [], [], [], []
        self._raw, self._raw_ends = bytearray(), array("i", [0])
        self._rejects = []
        self._pending_pages = 0
        self.save_state()

    def finish(
        self, *, status: str, reason: str | None, calls: Sequence[Mapping[str, Any]]
    ) -> None:
        """Flush what is left and mark the resource done with its final status."""
        self.state.status = status
        self.state.reason = reason
        self.state.done = True
        self.flush(calls, always=True)

    def save_state(self) -> None:
        self.save_state_of(self.state)

    def save_state_of(self, state: ResourceState) -> None:
        _write_bytes(self.folder / "state.json", state.to_json())


def write_calls(calls: Sequence[Mapping[str, Any]], path: Path) -> None:
    """Write call records (CALL_COLUMNS) as one Parquet file, atomically."""
    columns = [[c.get(name) for c in calls] for name, _ in CALL_COLUMNS]
    _write_table(pa.table(columns, schema=_CALL_SCHEMA), path)


class RunLanding:
    """The landing folder of one run."""

    def __init__(self, root: Path, run_id: str) -> None:
        self.run_id = check_run_id(run_id)
        self.root = root
        self.folder = root / run_id

    @property
    def exists(self) -> bool:
        return (self.folder / "run.json").exists()

    def create(self, meta: Mapping[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        _write_bytes(
            self.folder / "run.json",
            orjson.dumps({"run_id": self.run_id, **meta}, option=orjson.OPT_INDENT_2),
        )

    def meta(self) -> dict[str, Any]:
        data: dict[str, Any] = orjson.loads((self.folder / "run.json").read_bytes())
        return data

    def resource(self, resource: str, *, batch_records: int = 20_000) -> ResourceLanding:
        return ResourceLanding(self.folder / resource, resource, batch_records=batch_records)

    def states(self) -> dict[str, ResourceState]:
        """The committed state of every resource landed so far (rolled forward from the
        newest batch where state.json lags, exactly as a resumed extraction sees it)."""
        folders = {p.parent for p in self.folder.glob("*/state.json")}
        folders |= {p.parent for p in self.folder.glob("*/batch-*.parquet")}
        return {f.name: ResourceLanding(f, f.name).state for f in sorted(folders)}

    def files(self, resource: str, kind: str) -> list[Path]:
        """Landed Parquet files of one kind (`batch`, `rejects`, `calls`) for a resource."""
        return sorted((self.folder / resource).glob(f"{kind}-*.parquet"))

    @staticmethod
    def latest(root: Path) -> str | None:
        """The newest run id under `root`, if any."""
        runs = sorted(p.name for p in root.glob("*") if RUN_ID.match(p.name))
        return runs[-1] if runs else None
