"""The audit trail: an append-only, hash-chained JSON-lines log beside the warehouse.

The published warehouse is replaced by rename at every publish, so a decision written only
into it would be lost by a run that copied the file before. The log is the record: every
change of a finding's work state (`ack`, `unack`, `assign`, `resolve`), and whatever else
is audited (other writers add `match`, `unmatch`, `accept_books`, `close`, …), is one line —
who (the OS user), when, the note, and the finding's amounts at that moment — appended
under an exclusive lock, flushed and fsync'd before the command says it is done. Runs copy
it into `finding_acks` at load and once more just before publish; a finding's state is
always decided when read (recon.findings.work). Readers ignore actions they do not know.

**Recorded outside the file at once.** Under the same lock, every line is also inserted into
the published warehouse's `finding_acks` (recon.findings.trail_table) in one transaction
with the write: `findings_current` shows an action at once, and `recon findings verify`
compares every line with that record (docs/audit-trail.md). `who` is `RECON_USER`, else the
OS user as `os:<name>`; with `RECON_TRAIL_KEY` set every line also carries `seal`, an
HMAC-SHA256 of its bytes under that key.

**Tamper evidence.** Every line carries `prev`, the SHA-256 (hex) of the line before it
(its bytes without the newline; the first line: of nothing). A line edited, removed or
moved breaks the chain at the next line, which `verify_trail` names. Lines written before
the trail was chained (no `prev`) may only stand at its start; the first chained line then
carries the SHA-256 of every byte before it, so they are covered too. A line cut by a crash
(it does not parse) stays in the chain: the next line vouches for its bytes. What no chain
can show is lines cut off the end; `recon.findings.verify` also compares the trail with the
copy the warehouse took at its last load (`finding_acks.line_hash`) for that.
"""

from __future__ import annotations

import contextlib
import getpass
import glob
import hashlib
import itertools
import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson

from recon.findings.chain import (
    GENESIS,
    count_lines,
    has_prev,
    last_line,
    line_hash,
    seal_of,
    sealed,
    split_lines,
    trail_key,
)
from recon.findings.events import AckEvent, Amounts
from recon.warehouse.trail_file import acks_path, hold_trail, trail_locked

__all__ = [
    "GENESIS",
    "AckEvent",
    "AckLog",
    "Amounts",
    "NewEvent",
    "acks_path",
    "amounts_of",
    "current_acks",
    "is_acknowledged",
    "line_hash",
    "seal_of",
    "split_lines",
    "trail_key",
    "warehouse_of",
    "who_acts",
]

log = logging.getLogger("recon")

_ACTION = re.compile(r"[a-z][a-z0-9_]{0,39}")
WORK_ACTIONS = ("ack", "unack", "assign", "resolve")  # recon.findings.work decides from them
#: Lines per write of a bulk action (issue 38): memory holds one chunk, not a million lines.
APPEND_CHUNK = 10_000


def who_acts() -> str:
    """Who acts from the command line: `RECON_USER`, else the OS user as `os:<name>`."""
    named = (os.environ.get("RECON_USER") or "").strip()
    if named:
        return named
    try:
        return f"os:{getpass.getuser()}"
    except (KeyError, OSError):  # no name for this uid (a container)
        return f"os:uid-{os.getuid()}"


def warehouse_of(trail: Path) -> Path | None:
    """The warehouse file whose trail `trail` is (the inverse of `acks_path`), if one exists
    beside it: a DuckDB file named like it (`recon.acks.jsonl` -> `recon.duckdb`, `recon.db`)."""
    stem = trail.name.removesuffix(".acks.jsonl")
    if stem == trail.name:
        return None
    try:
        candidates = sorted(trail.parent.glob(f"{glob.escape(stem)}.*"))
    except OSError:
        return None
    for path in candidates:
        if path == trail or path.name.count(".") != stem.count(".") + 1 or not path.is_file():
            continue
        try:
            with path.open("rb") as fh:
                head = fh.read(12)
        except OSError:
            continue
        if head[8:12] == b"DUCK":  # DuckDB's file header
            return path
    return None


def amounts_of(
    check_name: str, currency: str | None, amount_minor: int | None, detail: str | None
) -> Amounts:
    """The amounts of a finding as an acknowledgement records them."""
    sides = detail if check_name.startswith("ledger_") else None
    return Amounts(currency, None if amount_minor is None else int(amount_minor), sides)


@dataclass(frozen=True)
class NewEvent:
    """A line to append: one action on one key (a finding key, an order, a period…)."""

    action: str
    finding_key: str
    amounts: Amounts | None = None
    note: str | None = None
    until: date | None = None
    owner: str | None = None
    reason: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)


_UNSET: Any = object()


def _who_when(who: str | None, at: datetime | None) -> tuple[str, str]:
    """Who acts (given, else `who_acts()`) and when, as a line writes them."""
    when = (at or datetime.now(UTC)).astimezone(UTC)
    return who or who_acts(), when.isoformat().replace("+00:00", "Z")


def _body(event: NewEvent, user: str, stamp: str) -> dict[str, Any]:
    """The line of one event (before the chain's `prev`)."""
    if not _ACTION.fullmatch(event.action):
        raise ValueError(f"unknown action {event.action!r}")
    body: dict[str, Any] = {
        "action": event.action,
        "finding_key": event.finding_key,
        "who": user,
        "at": stamp,
        "note": event.note,
        "until": event.until.isoformat() if event.until else None,
        "amounts": asdict(event.amounts) if event.amounts is not None else None,
    }
    if event.owner is not None or event.action == "assign":
        body["owner"] = event.owner
    if event.reason is not None:
        body["reason"] = event.reason
    for name, value in event.fields.items():
        body.setdefault(name, value)
    return body


def _lines_before(con: Any, fd: int, size: int, last_hash: str) -> int:
    """How many lines the trail holds before an append: the warehouse's record says so when
    its latest line is the file's last line (`last_hash`, the hash `prev` chains to); else
    (no record yet, lines written while no warehouse existed, a line cut by a crash, a trail
    from before chaining) the file is counted. The record is only trusted for a count the
    chain itself vouches for: a file whose last line is the record's latest has, short of
    an edit that `recon findings verify` names, exactly that many lines before it."""
    import duckdb

    from recon.warehouse.sql import read_sql

    try:
        row = con.execute(read_sql("trail/head.sql")).fetchone()
    except duckdb.Error:  # a warehouse from before the chain's columns: count instead
        row = None
    if row is not None and row[0] is not None and row[1] == last_hash:
        return int(row[0])
    return count_lines(fd, size)


class AckLog:
    """The append-only log file (and its record in the warehouse beside it)."""

    def __init__(
        self,
        path: Path,
        warehouse: Path | None = _UNSET,
        *,
        guard: contextlib.AbstractContextManager[Any] | None = None,
    ) -> None:
        self.path = path
        self._warehouse = warehouse
        # Held while a line is recorded in the warehouse: a process that also reads the
        # warehouse on other threads (recon serve) keeps its readers and its records apart,
        # DuckDB allowing one mode per file in a process.
        self._guard = guard

    @property
    def warehouse(self) -> Path | None:
        """The published warehouse that records every line (found beside the trail)."""
        if self._warehouse is _UNSET:
            return warehouse_of(self.path)
        return self._warehouse

    @contextlib.contextmanager
    def locked(self, *, create: bool = True) -> Iterator[None]:
        """Hold the trail's lock: no line is written by anyone else meanwhile (re-entrant in
        this process). A check made inside it (is this finding decided already?) still holds
        when the lines it allows are appended in it. `create=False` (a reader that only
        needs no line half-written): no trail yet, nothing locked and no file created."""
        with trail_locked(self.path, create=create):
            yield

    @contextlib.contextmanager
    def _locked(self) -> Iterator[int]:
        with hold_trail(self.path) as fd:
            yield fd

    @staticmethod
    def _prev(fd: int, size: int) -> tuple[str, bool]:
        """(`prev` for the next line, whether the file needs a newline first)."""
        if size == 0:
            return GENESIS, False
        start, end, cut = last_line(fd, size)
        last = os.pread(fd, end - start, start)
        chained = has_prev(last)
        if chained is None and start > 0:  # a cut line: chained if anything before was
            earlier = split_lines(os.pread(fd, start, 0))
            chained = any(has_prev(x) for x in earlier)
        if chained:
            return line_hash(last), cut
        # A trail written before chaining: the first chained line covers all of it.
        whole = os.pread(fd, size, 0) + (b"\n" if cut else b"")
        return hashlib.sha256(whole).hexdigest(), cut

    def append_events(
        self,
        events: Iterable[NewEvent],
        *,
        who: str | None = None,
        at: datetime | None = None,
        apply: Callable[[Any], None] | None = None,
    ) -> int:
        """Append one line per event, chained; fsync'd before returning; the number written.
        `events` may be a stream (a bulk action by filter): a chunk at a time under the lock.
        `apply(con)`: also change the published warehouse in the transaction that records
        the lines. An unknown action raises before anything is written or recorded: the
        lines are spooled and written only once every event made its line."""
        user, stamp = _who_when(who, at)
        return self._append_bodies((_body(e, user, stamp) for e in events), apply)

    def _append_bodies(
        self, bodies: Iterable[dict[str, Any]], apply: Callable[[Any], None] | None = None
    ) -> int:
        """Write `bodies` as chained lines (each gets `prev`; with RECON_TRAIL_KEY, `seal`),
        fsync'd, and record them in the published warehouse in one transaction, committed
        after the write: a line the file lacks is never recorded.

        One spool: `bodies` (a stream: a bulk action by filter on a million findings, which
        may itself be reading the warehouse read-only) is read to its end into a temporary
        file of finished lines first; only then is the warehouse opened read-write, the lines
        read back and recorded `APPEND_CHUNK` at a time, and the spool copied into the trail.
        Lines of concurrent writers never mix, a line is never in the file before the
        warehouse took it, an event that cannot make its line stops everything before
        anything is written, and a million never sit in memory (issue 38). The lines already
        in the trail are numbered from the warehouse's record, not by reading the file."""
        from recon.findings.record import open_record, record_events

        items = iter(bodies)
        first = next(items, None)
        if first is None:
            return 0
        key = trail_key()
        written = 0
        guard = self._guard if self._guard is not None else contextlib.nullcontext()
        with guard, self._locked() as fd, tempfile.TemporaryFile() as spool:
            size = os.fstat(fd).st_size
            prev, cut = self._prev(fd, size)
            last_hash = prev
            if cut:
                spool.write(b"\n")  # end a line cut by a crash, so that it stays alone
            for body in itertools.chain([first], items):
                line = orjson.dumps({**body, "prev": prev})
                if key is not None:
                    line = sealed(line, key)
                prev = line_hash(line)
                written += 1
                spool.write(line + b"\n")
            warehouse = self.warehouse
            con = open_record(warehouse) if warehouse is not None else None
            try:
                if con is not None:
                    seq = _lines_before(con, fd, size, last_hash)
                    con.execute("BEGIN TRANSACTION")
                    spool.seek(1 if cut else 0)
                    events: list[AckEvent] = []
                    for raw in spool:
                        line = raw.rstrip(b"\n")
                        seq += 1
                        events.append(_event(seq, orjson.loads(line), line_hash(line)))
                        if len(events) >= APPEND_CHUNK:
                            record_events(con, events)
                            events = []
                    record_events(con, events)
                    if apply is not None:
                        apply(con)
                spool.seek(0)
                while chunk := spool.read(APPEND_CHUNK * 512):
                    os.write(fd, chunk)
                os.fsync(fd)
                if con is not None:
                    con.execute("COMMIT")
                    con.execute("CHECKPOINT")
            finally:
                if con is not None:
                    con.close()
        return written

    def record(
        self,
        action: str,
        fields: Mapping[str, Any],
        *,
        note: str | None,
        who: str | None = None,
        at: datetime | None = None,
        also: Sequence[NewEvent] = (),
        apply: Callable[[Any], None] | None = None,
    ) -> dict[str, Any]:
        """Append one line that is not about one finding (a manual match, an accepted books
        input: `action` names it, `fields` say what), with who, when and the note, chained
        like every line, then the lines of `also` in the same write; fsync'd before
        returning. `apply(con)`: also change the published warehouse in the transaction
        that records them. Returns the line as written."""
        if not _ACTION.fullmatch(action) or action in WORK_ACTIONS:
            raise ValueError(f"{action!r}: work actions are appended with append()")
        for event in also:
            if not _ACTION.fullmatch(event.action):
                raise ValueError(f"unknown action {event.action!r}")
        user, stamp = _who_when(who, at)
        line: dict[str, Any] = {**fields, "action": action, "who": user, "at": stamp, "note": note}
        self._append_bodies([line, *(_body(e, user, stamp) for e in also)], apply)
        return line

    def head(self) -> dict[str, Any] | None:
        """The trail's chain head now: {"lines", "head"} (the SHA-256 of its last line), or
        None for an empty trail. Written down in close packs (recon findings verify), which
        checks that line `lines` still hashes to `head`: the last line is read from the end,
        the lines are counted a block at a time, the trail is never held whole."""
        try:
            fh = self.path.open("rb")
        except FileNotFoundError:
            return None
        with fh:
            fd = fh.fileno()
            size = os.fstat(fd).st_size
            if size == 0:
                return None
            start, end, _cut = last_line(fd, size)
            last = os.pread(fd, end - start, start)
            return {"lines": count_lines(fd, size), "head": line_hash(last)}

    def records(self, actions: Iterable[str]) -> list[dict[str, Any]]:
        """Every line whose action is one of `actions`, in order (with `at` as a datetime,
        without the chain's `prev`); a line that does not parse is skipped, as by read()."""
        wanted = set(actions)
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        out: list[dict[str, Any]] = []
        for line in split_lines(raw):
            try:
                data = orjson.loads(line)
                if isinstance(data, dict) and data.get("action") in wanted:
                    data.pop("prev", None)
                    data.pop("seal", None)
                    data["at"] = datetime.fromisoformat(str(data["at"]).replace("Z", "+00:00"))
                    out.append(data)
            except (orjson.JSONDecodeError, KeyError, ValueError):
                continue
        return out

    def append(
        self,
        action: str,
        entries: Iterable[tuple[str, Amounts | None]],
        *,
        note: str | None,
        until: date | None = None,
        who: str | None = None,
        at: datetime | None = None,
        owner: str | None = None,
        reason: str | None = None,
        fields: Mapping[str, Any] | None = None,
    ) -> int:
        """Append one event per (key, amounts), all with the same action and note; `entries`
        may be a stream (written as it comes)."""
        if not _ACTION.fullmatch(action):
            raise ValueError(f"unknown action {action!r}")
        events = (
            NewEvent(
                action,
                key,
                amounts,
                note=note,
                until=until,
                owner=owner,
                reason=reason,
                fields=dict(fields or {}),
            )
            for key, amounts in entries
        )
        return self.append_events(events, who=who, at=at)

    def read(self) -> list[AckEvent]:
        """Every event, in order. A line that does not parse (a write cut by a crash) is
        skipped with a warning; nothing else is ever dropped."""
        return list(self.iter_events())

    def iter_events(self) -> Iterator[AckEvent]:
        """`read()` a line at a time: a trail of a million lines (a bulk action) is never
        held whole, as bytes or as events (issue 38)."""
        try:
            fh = self.path.open("rb")
        except FileNotFoundError:
            return
        with fh:
            for seq, raw in enumerate(fh, start=1):
                line = raw[:-1] if raw.endswith(b"\n") else raw
                if not line.strip():
                    continue
                try:
                    yield _event(seq, orjson.loads(line), line_hash(line))
                except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
                    log.warning("%s line %d is not an audit line; skipped", self.path, seq)


_KNOWN = {"action", "finding_key", "who", "at", "note", "until", "amounts", "owner", "reason"}


def _event(seq: int, data: Mapping[str, Any], digest: str) -> AckEvent:
    amounts = data.get("amounts")
    return AckEvent(
        seq=seq,
        action=str(data["action"]),
        finding_key=str(data.get("finding_key") or ""),
        who=str(data["who"]),
        at=datetime.fromisoformat(str(data["at"]).replace("Z", "+00:00")),
        note=data.get("note"),
        until=date.fromisoformat(data["until"]) if data.get("until") else None,
        amounts=Amounts(**amounts) if isinstance(amounts, dict) else None,
        owner=data.get("owner"),
        reason=data.get("reason"),
        fields={k: v for k, v in data.items() if k not in _KNOWN and k not in ("prev", "seal")},
        line_hash=digest,
        prev=data.get("prev"),
    )


def current_acks(events: Iterable[AckEvent]) -> dict[str, AckEvent]:
    """The latest ack/unack event per finding key."""
    latest: dict[str, AckEvent] = {}
    for event in events:
        if event.action in ("ack", "unack"):
            latest[event.finding_key] = event
    return latest


def is_acknowledged(
    latest: Mapping[str, AckEvent], key: str, amounts: Amounts, today: date | None = None
) -> bool:
    """True if the finding `key`, which now has `amounts`, is acknowledged today."""
    event = latest.get(key)
    return event is not None and event.holds(amounts, today or datetime.now(UTC).date())
