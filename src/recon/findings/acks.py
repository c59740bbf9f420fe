"""The audit trail: an append-only, hash-chained JSON-lines log beside the warehouse.

The published warehouse is replaced by rename at every publish, so a decision written only
into it would be lost by a run that copied the file before. The log is the record: every
change of a finding's work state (`ack`, `unack`, `assign`, `resolve`), and whatever else
is audited (other writers add `match`, `unmatch`, `accept_books`, `close`, …), is one line —
who (the OS user), when, the note, and the finding's amounts at that moment — appended
under an exclusive lock, flushed and fsync'd before the command says it is done. Runs copy
it into `finding_acks` at load and once more just before publish; a finding's state is
always decided when read (recon.findings.work). Readers ignore actions they do not know.

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
import fcntl
import getpass
import hashlib
import itertools
import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson

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
    "split_lines",
]

log = logging.getLogger("recon")

GENESIS = hashlib.sha256(b"").hexdigest()  # `prev` of the first line
_ACTION = re.compile(r"[a-z][a-z0-9_]{0,39}")
WORK_ACTIONS = ("ack", "unack", "assign", "resolve")  # recon.findings.work decides from them
#: Lines per write of a bulk action (issue 38): memory holds one chunk, not a million lines.
APPEND_CHUNK = 10_000


def line_hash(line: bytes) -> str:
    """The SHA-256 (hex) of one line's bytes, without its newline."""
    return hashlib.sha256(line).hexdigest()


@dataclass(frozen=True)
class Amounts:
    """What an acknowledgement is bound to: the finding's money, as it stood."""

    currency: str | None
    amount_minor: int | None
    sides: str | None  # ledger findings: their detail (books and provider amounts)


def amounts_of(
    check_name: str, currency: str | None, amount_minor: int | None, detail: str | None
) -> Amounts:
    """The amounts of a finding as an acknowledgement records them."""
    sides = detail if check_name.startswith("ledger_") else None
    return Amounts(currency, None if amount_minor is None else int(amount_minor), sides)


@dataclass(frozen=True)
class AckEvent:
    """One line of the log."""

    seq: int  # line number in the log, from 1
    action: str  # ack | unack | assign | resolve | anything another writer audits
    finding_key: str
    who: str
    at: datetime
    note: str | None
    until: date | None
    amounts: Amounts | None
    owner: str | None = None  # assign
    reason: str | None = None  # resolve
    fields: Mapping[str, Any] = field(default_factory=dict)  # the rest of the line
    line_hash: str = ""
    prev: str | None = None

    def holds(self, amounts: Amounts, today: date) -> bool:
        """True if this event acknowledges a finding that now has `amounts`."""
        return (
            self.action == "ack"
            and self.amounts == amounts
            and (self.until is None or self.until >= today)
        )


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


def acks_path(db: Path) -> Path:
    """The log of the warehouse `db`: `data/recon.duckdb` -> `data/recon.acks.jsonl`."""
    return db.with_name(f"{db.stem}.acks.jsonl")


def split_lines(raw: bytes) -> list[bytes]:
    """The trail's lines, without their newlines (a cut last line included)."""
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last line
    return lines


def _has_prev(line: bytes) -> bool | None:
    """True/False if the line parses as an object (with/without `prev`); None if not."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return ("prev" in data) if isinstance(data, dict) else None


class AckLog:
    """The append-only log file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextlib.contextmanager
    def _locked(self) -> Iterator[int]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)  # releases the lock
        if created:  # the new file's name must survive a crash too
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    @staticmethod
    def _prev(fd: int, size: int) -> tuple[str, bool]:
        """(`prev` for the next line, whether the file needs a newline first)."""
        if size == 0:
            return GENESIS, False
        cut = os.pread(fd, 1, size - 1) != b"\n"
        end = size if cut else size - 1
        # Read backwards for the last line's start.
        start, chunk = end, 65536
        while start > 0:
            lo = max(0, start - chunk)
            part = os.pread(fd, start - lo, lo)
            nl = part.rfind(b"\n")
            if nl >= 0:
                start = lo + nl + 1
                break
            start = lo
        last = os.pread(fd, end - start, start)
        chained = _has_prev(last)
        if chained is None and start > 0:  # a cut line: chained if anything before was
            earlier = split_lines(os.pread(fd, start, 0))
            chained = any(_has_prev(x) for x in earlier)
        if chained:
            return line_hash(last), cut
        # A trail written before chaining: the first chained line covers all of it.
        whole = os.pread(fd, size, 0) + (b"\n" if cut else b"")
        return hashlib.sha256(whole).hexdigest(), cut

    def append_events(
        self, events: Iterable[NewEvent], *, who: str | None = None, at: datetime | None = None
    ) -> int:
        """Append one line per event, chained; fsync'd before returning. `events` may be a
        stream (a bulk action by filter): written a chunk at a time under the lock."""
        if isinstance(events, Sequence):
            for event in events:  # a list is checked whole before anything is written
                if not _ACTION.fullmatch(event.action):
                    raise ValueError(f"unknown action {event.action!r}")
        when = (at or datetime.now(UTC)).astimezone(UTC)
        user = who or getpass.getuser()
        stamp = when.isoformat().replace("+00:00", "Z")
        return self._append_bodies(self._bodies(events, user, stamp))

    @staticmethod
    def _bodies(events: Iterable[NewEvent], user: str, stamp: str) -> Iterator[dict[str, Any]]:
        for event in events:
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
            yield body

    def _append_bodies(self, bodies: Iterable[dict[str, Any]]) -> int:
        """Write `bodies` as chained lines (each gets `prev`), fsync'd; the number written.
        Under the lock, in writes of `APPEND_CHUNK` lines (one write for a small action):
        lines of concurrent writers never mix, and a million never sit in memory."""
        items = iter(bodies)
        first = next(items, None)
        if first is None:
            return 0
        written = 0
        with self._locked() as fd:
            prev, cut = self._prev(fd, os.fstat(fd).st_size)
            out = [b"\n"] if cut else []  # end a line cut by a crash, so that it stays alone
            for body in itertools.chain([first], items):
                line = orjson.dumps({**body, "prev": prev})
                prev = line_hash(line)
                out.append(line + b"\n")
                written += 1
                if len(out) >= APPEND_CHUNK:
                    os.write(fd, b"".join(out))
                    out = []
            if out:
                os.write(fd, b"".join(out))
            os.fsync(fd)
        return written

    def record(
        self,
        action: str,
        fields: Mapping[str, Any],
        *,
        note: str | None,
        who: str | None = None,
        at: datetime | None = None,
    ) -> dict[str, Any]:
        """Append one line that is not about one finding (a manual match, an accepted books
        input: `action` names it, `fields` say what), with who, when and the note, chained
        like every line; fsync'd before returning. Returns the line as written."""
        if not _ACTION.fullmatch(action) or action in WORK_ACTIONS:
            raise ValueError(f"{action!r}: work actions are appended with append()")
        when = (at or datetime.now(UTC)).astimezone(UTC)
        line: dict[str, Any] = {
            **fields,
            "action": action,
            "who": who or getpass.getuser(),
            "at": when.isoformat().replace("+00:00", "Z"),
            "note": note,
        }
        self._append_bodies([line])
        return line

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
        fields={k: v for k, v in data.items() if k not in _KNOWN and k != "prev"},
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
