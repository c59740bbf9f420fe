"""The acknowledgement audit trail: an append-only JSON-lines log beside the warehouse.

The published warehouse is replaced by rename at every publish, so an acknowledgement
written only into it would be lost by a run that copied the file before. The log is the
record: every `ack` and `unack` is one line (who = the OS user, when, the note, `until`,
and the finding's amounts at that moment), appended under an exclusive lock, flushed and
fsync'd before the command says it is done. Runs copy it into `finding_acks` at load and
once more just before publish; "acknowledged" is always decided when read.

An acknowledgement holds while the finding still has the amounts it was acknowledged with
(its currency and amount; for ledger findings also both sides, which their detail states)
and its `until` day has not passed; after that the finding is open again.
"""

from __future__ import annotations

import contextlib
import fcntl
import getpass
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson

__all__ = [
    "AckEvent",
    "AckLog",
    "Amounts",
    "acks_path",
    "amounts_of",
    "current_acks",
    "is_acknowledged",
    "load_acks",
    "refresh_acks",
]

log = logging.getLogger("recon")


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
    action: str  # ack | unack
    finding_key: str
    who: str
    at: datetime
    note: str | None
    until: date | None
    amounts: Amounts | None

    def holds(self, amounts: Amounts, today: date) -> bool:
        """True if this event acknowledges a finding that now has `amounts`."""
        return (
            self.action == "ack"
            and self.amounts == amounts
            and (self.until is None or self.until >= today)
        )


def acks_path(db: Path) -> Path:
    """The log of the warehouse `db`: `data/recon.duckdb` -> `data/recon.acks.jsonl`."""
    return db.with_name(f"{db.stem}.acks.jsonl")


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

    def append(
        self,
        action: str,
        entries: Iterable[tuple[str, Amounts | None]],
        *,
        note: str | None,
        until: date | None = None,
        who: str | None = None,
        at: datetime | None = None,
    ) -> int:
        """Append one event per (finding key, amounts); fsync'd before returning."""
        if action not in ("ack", "unack"):
            raise ValueError(f"unknown action {action!r}")
        when = (at or datetime.now(UTC)).astimezone(UTC)
        user = who or getpass.getuser()
        lines = [
            orjson.dumps(
                {
                    "action": action,
                    "finding_key": key,
                    "who": user,
                    "at": when.isoformat().replace("+00:00", "Z"),
                    "note": note,
                    "until": until.isoformat() if until else None,
                    "amounts": asdict(amounts) if amounts is not None else None,
                }
            )
            + b"\n"
            for key, amounts in entries
        ]
        if not lines:
            return 0
        with self._locked() as fd:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                lines.insert(0, b"\n")  # end a line cut by a crash, so that it stays alone
            os.write(fd, b"".join(lines))  # one write: lines of concurrent writers never mix
            os.fsync(fd)
        return len(lines)

    def read(self) -> list[AckEvent]:
        """Every event, in order. A line that does not parse (a write cut by a crash) is
        skipped with a warning; nothing else is ever dropped."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        events: list[AckEvent] = []
        for seq, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                data = orjson.loads(line)
                if isinstance(data, dict) and data.get("action") not in ("ack", "unack"):
                    continue  # another kind of line of the trail (a manual match, …)
                events.append(_event(seq, data))
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                log.warning("%s line %d is not an acknowledgement; skipped", self.path, seq)
        return events

    def record(
        self,
        action: str,
        fields: Mapping[str, Any],
        *,
        note: str | None,
        who: str | None = None,
        at: datetime | None = None,
    ) -> dict[str, Any]:
        """Append one line of another kind than ack/unack (a manual match, an accepted books
        input: `action` names it, `fields` say what), with who, when and the note; fsync'd
        before returning. Readers of acknowledgements skip it. Returns the line as written."""
        if action in ("ack", "unack"):
            raise ValueError("acknowledgements are appended with append()")
        when = (at or datetime.now(UTC)).astimezone(UTC)
        line: dict[str, Any] = {
            **fields,
            "action": action,
            "who": who or getpass.getuser(),
            "at": when.isoformat().replace("+00:00", "Z"),
            "note": note,
        }
        data = orjson.dumps(line) + b"\n"
        with self._locked() as fd:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # end a line cut by a crash, so that it stays alone
            os.write(fd, data)
            os.fsync(fd)
        return line

    def records(self, actions: Iterable[str]) -> list[dict[str, Any]]:
        """Every line whose action is one of `actions`, in order (with `at` as a datetime);
        a line that does not parse is skipped, as by read()."""
        wanted = set(actions)
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        out: list[dict[str, Any]] = []
        for line in raw.splitlines():
            try:
                data = orjson.loads(line)
                if isinstance(data, dict) and data.get("action") in wanted:
                    data["at"] = datetime.fromisoformat(str(data["at"]).replace("Z", "+00:00"))
                    out.append(data)
            except (orjson.JSONDecodeError, KeyError, ValueError):
                continue
        return out


def _event(seq: int, data: Mapping[str, Any]) -> AckEvent:
    amounts = data.get("amounts")
    return AckEvent(
        seq=seq,
        action=str(data["action"]),
        finding_key=str(data["finding_key"]),
        who=str(data["who"]),
        at=datetime.fromisoformat(str(data["at"]).replace("Z", "+00:00")),
        note=data.get("note"),
        until=date.fromisoformat(data["until"]) if data.get("until") else None,
        amounts=Amounts(**amounts) if isinstance(amounts, dict) else None,
    )


def current_acks(events: Iterable[AckEvent]) -> dict[str, AckEvent]:
    """The latest event per finding key."""
    latest: dict[str, AckEvent] = {}
    for event in events:
        latest[event.finding_key] = event
    return latest


def is_acknowledged(
    latest: Mapping[str, AckEvent], key: str, amounts: Amounts, today: date | None = None
) -> bool:
    """True if the finding `key`, which now has `amounts`, is acknowledged today."""
    event = latest.get(key)
    return event is not None and event.holds(amounts, today or datetime.now(UTC).date())


def load_acks(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Replace `finding_acks` with the log's events (in one statement); the count."""
    events = AckLog(path).read()
    rows = [
        (
            e.seq,
            e.action,
            e.finding_key,
            e.who,
            e.at,
            e.note,
            e.until,
            e.amounts.currency if e.amounts else None,
            e.amounts.amount_minor if e.amounts else None,
            e.amounts.sides if e.amounts else None,
        )
        for e in events
    ]
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM finding_acks")
        if rows:
            con.executemany("INSERT INTO finding_acks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(rows)


def refresh_acks(work_path: Path, path: Path) -> int:
    """Load the log into the (closed) working copy at `work_path`, just before it is
    published, so that acknowledgements made while the run ran are in the new file."""
    if not work_path.exists():
        return 0
    con = duckdb.connect(str(work_path))
    try:
        con.execute("SET TimeZone = 'UTC'")
        count = load_acks(con, path)
        con.execute("CHECKPOINT")
        return count
    finally:
        con.close()
