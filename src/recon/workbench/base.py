"""What every part of the workbench's service shares (recon.workbench.service): the warehouse
read-only for a moment, the audit trail, the text of a request, and how a proposal is
written. The parts — matches, proposals, the close, the findings' actions — build on it.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb

from recon.errors import WarehouseError
from recon.findings.acks import AckEvent, AckLog, Amounts, acks_path, amounts_of
from recon.warehouse.sql import read_sql
from recon.workbench.config import WorkbenchSettings
from recon.workbench.holding import HOLDING
from recon.workbench.rules import Actor, Invalid, NotFound
from recon.workbench.snapshot import QueueSnapshot, open_file

__all__ = ["MAX_NOTE", "Outcome", "Target", "WorkbenchBase", "plain", "text_of"]

MAX_NOTE = 2000


@dataclass(frozen=True)
class Outcome:
    """What an action did: applied now, or a proposal waiting for an approver; `already`:
    nothing written, it only repeated what stands (said in words)."""

    applied: bool
    proposal: str | None = None
    already: str | None = None


@dataclass(frozen=True)
class Target:
    """A finding an action is about, as it stands now."""

    finding_key: str
    amounts: Amounts
    currency: str | None
    amount_minor: int | None

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Target:
        """From a row with the finding's check_name, currency, amount_minor and detail."""
        return cls(
            str(row["finding_key"]),
            amounts_of(row["check_name"], row["currency"], row["amount_minor"], row["detail"]),
            row["currency"],
            row["amount_minor"],
        )


def text_of(value: Any, what: str, *, required: bool = True) -> str | None:
    """A request's text field, stripped; Invalid when required and missing, or too long."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise Invalid(f"{what} is required")
        return None
    if not isinstance(value, str):
        raise Invalid(f"{what} must be text")
    text = value.strip()
    if len(text) > MAX_NOTE:
        raise Invalid(f"{what} is longer than {MAX_NOTE} characters")
    return text


def plain(value: Any) -> Any:
    """A JSON-safe value (datetimes as ISO text)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    return value


def new_id(prefix: str) -> str:
    """A proposal's or a batch's id: its letter, the day, 8 random hex digits."""
    return f"{prefix}{datetime.now(UTC):%Y%m%d}-{secrets.token_hex(4)}"


class WorkbenchBase:
    """The workbench on one warehouse and its audit trail. `serving` (recon serve): the
    trail's events are kept in memory between requests (parsed again when the file
    changes); else (a CLI command, once) they are streamed, never held whole."""

    def __init__(self, db: Path, settings: WorkbenchSettings, *, serving: bool = True) -> None:
        self.db = db
        self.settings = settings
        self.serving = serving
        self.trail = AckLog(acks_path(db), guard=HOLDING.write)
        self._decide = threading.Lock()  # one proposal decision at a time in this process
        self.snapshot = QueueSnapshot(db)
        self._cache_lock = threading.Lock()
        self._cached: tuple[tuple[int, int, int], list[AckEvent]] | None = None

    def events(self) -> list[AckEvent]:
        """The trail's events, parsed again only when the file changed (it is append-only:
        its size, mtime and inode say so); 10,000 lines cost ~0.2 s to parse."""
        try:
            st = self.trail.path.stat()
        except FileNotFoundError:
            return []
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        with self._cache_lock:
            if self._cached is not None and self._cached[0] == stamp:
                return self._cached[1]
        events = self.trail.read()
        with self._cache_lock:
            self._cached = (stamp, events)
        return events

    def scan(self) -> Iterable[AckEvent]:
        """The trail's events for one pass: the kept list when serving, else a stream."""
        return self.events() if self.serving else self.trail.iter_events()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold what an action's check-then-write needs, in the one order every writer of
        this process takes them (the warehouse's readers, then the trail's lock): nothing
        is decided by anyone else between the check and the lines."""
        with HOLDING.write, self.trail.locked():
            yield

    # -- reading -------------------------------------------------------------------------

    @contextmanager
    def _read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with HOLDING.read:
            con = open_file(self.db)
            try:
                yield con
            except duckdb.Error as exc:
                raise WarehouseError(
                    f"cannot read the warehouse: {str(exc).splitlines()[0]}"
                ) from None
            finally:
                con.close()

    @contextmanager
    def _read_queue(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The queue's snapshot when it is fresh, else the published warehouse."""
        fresh = self.snapshot.current() if self.serving else None
        if fresh is None:
            with self._read() as con:
                yield con
            return
        con = open_file(fresh)
        try:
            yield con
        except duckdb.Error as exc:
            raise WarehouseError(f"cannot read the queue: {str(exc).splitlines()[0]}") from None
        finally:
            con.close()

    def _finding_row(self, con: duckdb.DuckDBPyConnection, key: str) -> dict[str, Any]:
        cur = con.execute(read_sql("workbench/finding.sql"), {"key": key})
        row = cur.fetchone()
        if row is None:
            raise NotFound(f"no unresolved finding {key} in the latest run")
        names = [d[0] for d in cur.description]
        return dict(zip(names, row, strict=True))

    def target(self, key: str) -> Target:
        """The finding `key` as it stands in the latest run (NotFound if it is not there)."""
        with self._read() as con:
            return Target.of(self._finding_row(con, key))

    # -- proposals -----------------------------------------------------------------------

    def _propose(
        self, actor: Actor, kind: str, key: str | None, note: str, fields: Mapping[str, Any]
    ) -> Outcome:
        """Write one proposal (a `propose` line with the maker as `who`)."""
        pid = new_id("P")
        body = {"proposal": pid, "kind": kind, **fields}
        if key is not None:
            body["finding_key"] = key
        self.trail.record("propose", body, note=note, who=actor.name)
        return Outcome(applied=False, proposal=pid)
