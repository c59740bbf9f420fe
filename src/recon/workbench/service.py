"""The one service layer of the workbench: every action from the pages and the JSON API goes
through `Workbench`, which enforces the roles and the four eyes and writes the audit trail
(recon.findings.acks) with the authenticated user as `who`.

Four eyes: a write-off (`resolve` with reason `written_off`), a manual match, an accepted
suggestion, and a manual resolution of a finding above RECON_APPROVAL_THRESHOLD_MINOR are
*proposals* (a `propose` line). An approver other than the maker approves (an `approve` line,
then the action itself, written with `who` = the maker and `approved_by`, `proposal` fields)
or rejects (a `reject` line). A proposal is decided once.

The warehouse is opened read-only for each call and closed before it returns, so a night can
publish and `recon query` can read while the workbench runs.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb

from recon.errors import ReconError, WarehouseError
from recon.findings.acks import AckEvent, AckLog, Amounts, NewEvent, acks_path, amounts_of
from recon.findings.work import REASONS
from recon.warehouse.sql import read_sql
from recon.workbench.config import WorkbenchSettings
from recon.workbench.queue import Page, QueueFilters, read_queue
from recon.workbench.snapshot import HOLDING, QueueSnapshot, open_file
from recon.workbench.users import at_least

__all__ = [
    "Actor",
    "Conflict",
    "Forbidden",
    "Invalid",
    "NotFound",
    "Outcome",
    "Workbench",
]

FOUR_EYES_REASONS = ("written_off",)
BULK_MAX = 5000
_MAX_NOTE = 2000


class Forbidden(ReconError):
    """The user's role may not do this, or they made the proposal they would approve."""


class NotFound(ReconError):
    """No such finding or proposal."""


class Invalid(ReconError):
    """The request is malformed (a missing note, an unknown reason, …)."""


class Conflict(ReconError):
    """The thing changed under the request: a proposal already decided, an amount moved."""


@dataclass(frozen=True)
class Actor:
    """The authenticated user acting."""

    name: str
    role: str


@dataclass(frozen=True)
class Outcome:
    """What an action did: applied now, or a proposal waiting for an approver."""

    applied: bool
    proposal: str | None = None


def _text(value: Any, what: str, *, required: bool = True) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise Invalid(f"{what} is required")
        return None
    if not isinstance(value, str):
        raise Invalid(f"{what} must be text")
    text = value.strip()
    if len(text) > _MAX_NOTE:
        raise Invalid(f"{what} is longer than {_MAX_NOTE} characters")
    return text


def _plain(value: Any) -> Any:
    """A JSON-safe value (datetimes as ISO text)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    return value


class Workbench:
    """The workbench on one warehouse and its audit trail."""

    def __init__(self, db: Path, settings: WorkbenchSettings) -> None:
        self.db = db
        self.settings = settings
        self.trail = AckLog(acks_path(db), guard=HOLDING)
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

    # -- reading -------------------------------------------------------------------------

    @contextmanager
    def _read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with HOLDING:
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
        fresh = self.snapshot.current()
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

    def queue(self, filters: QueueFilters, limit: int, cursor: str | None) -> Page:
        """One page of the queue."""
        events = self.events()
        with self._read_queue() as con:
            return read_queue(con, events, filters, limit, cursor, self.settings)

    def groups(self) -> list[dict[str, Any]]:
        """Per check: how many unresolved findings (the queue's headings)."""
        with self._read_queue() as con:
            rows = con.execute(read_sql("workbench/groups.sql")).fetchall()
        return [{"check_name": r[0], "severity": r[1], "findings": int(r[2])} for r in rows]

    def _finding_row(self, con: duckdb.DuckDBPyConnection, key: str) -> dict[str, Any]:
        cur = con.execute(read_sql("workbench/finding.sql"), {"key": key})
        row = cur.fetchone()
        if row is None:
            raise NotFound(f"no unresolved finding {key} in the latest run")
        names = [d[0] for d in cur.description]
        return dict(zip(names, row, strict=True))

    def finding(self, key: str) -> dict[str, Any]:
        """One finding: its fields, work state, sides (books, provider) and candidates."""
        page = None
        with self._read() as con:
            row = self._finding_row(con, key)
            books = _rows(
                con, "workbench/books_side.sql", {"id": row["entity_id"]}, "ledger_orders"
            )
            provider = _rows(
                con, "workbench/provider_side.sql", {"id": row["entity_id"]}, "payments"
            )
            candidates = _rows(
                con, "workbench/candidates.sql", {"order": row["entity_id"]}, "ledger_suggestions"
            )
            page = read_queue(
                con, self.events(), QueueFilters(state=None, key=key), 1, None, self.settings
            )
        item = page.items[0] if page.items else {}
        out = {k: _plain(v) for k, v in row.items() if k not in ("latest_at",)}
        out.update(
            {
                "work_state": item.get("work_state"),
                "owner": item.get("owner"),
                "known_days": item.get("known_days"),
                "item_age_days": item.get("item_age_days"),
                "due_at": item.get("due_at"),
                "sides": {"books": books, "provider": provider},
                "candidates": candidates,
                "differs": _differs(books, provider),
                "proposals": [p for p in self.proposals(None) if p["finding_key"] == key],
            }
        )
        return out

    def amounts(self, key: str) -> tuple[dict[str, Any], Amounts]:
        with self._read() as con:
            row = self._finding_row(con, key)
        return row, amounts_of(
            row["check_name"], row["currency"], row["amount_minor"], row["detail"]
        )

    def trail_lines(self, key: str | None) -> list[dict[str, Any]]:
        """The trail's lines about `key` (or every line), oldest first."""
        out: list[dict[str, Any]] = []
        for e in self.events():
            fields: dict[str, Any] = dict(e.fields)
            if key is not None and e.finding_key != key:
                continue
            out.append(
                {
                    "seq": e.seq,
                    "at": _plain(e.at),
                    "who": e.who,
                    "action": e.action,
                    "finding_key": e.finding_key or None,
                    "note": e.note,
                    "owner": e.owner,
                    "reason": e.reason,
                    **{k: fields[k] for k in ("proposal", "approved_by", "kind") if k in fields},
                }
            )
        return out

    # -- proposals -------------------------------------------------------------------------

    def proposals(self, state: str | None = "pending") -> list[dict[str, Any]]:
        """Proposals, newest first; `state` pending, approved, rejected or None (all)."""
        found: dict[str, dict[str, Any]] = {}
        for e in self.events():
            pid = e.fields.get("proposal")
            if not isinstance(pid, str):
                continue
            if e.action == "propose":
                found[pid] = {
                    "id": pid,
                    "kind": e.fields.get("kind"),
                    "finding_key": e.finding_key or None,
                    "maker": e.who,
                    "made_at": _plain(e.at),
                    "note": e.note,
                    "reason": e.reason,
                    "order": e.fields.get("order"),
                    "payments": e.fields.get("payments"),
                    "currency": e.fields.get("currency"),
                    "amount_minor": e.fields.get("amount_minor"),
                    "state": "pending",
                    "decided_by": None,
                    "decided_at": None,
                    "decision_note": None,
                }
            elif (
                e.action in ("approve", "reject")
                and pid in found
                and (found[pid]["state"] == "pending")
            ):
                found[pid].update(
                    state="approved" if e.action == "approve" else "rejected",
                    decided_by=e.who,
                    decided_at=_plain(e.at),
                    decision_note=e.note,
                )
        out = [p for p in found.values() if state is None or p["state"] == state]
        return sorted(out, key=lambda p: str(p["made_at"]), reverse=True)

    def _propose(
        self, actor: Actor, kind: str, key: str | None, note: str, fields: Mapping[str, Any]
    ) -> Outcome:
        pid = f"P{datetime.now(UTC):%Y%m%d}-{secrets.token_hex(4)}"
        body = {"proposal": pid, "kind": kind, **fields}
        if key is not None:
            body["finding_key"] = key
        self.trail.record("propose", body, note=note, who=actor.name)
        return Outcome(applied=False, proposal=pid)

    def _proposal(self, pid: str) -> dict[str, Any]:
        for p in self.proposals(None):
            if p["id"] == pid:
                return p
        raise NotFound(f"no proposal {pid}")

    def approve(self, actor: Actor, pid: str, note: Any) -> Outcome:
        """Approve another person's proposal and apply it (approver or admin only)."""
        text = _text(note, "note", required=False)
        self._may(actor, "approver", "approve proposals")
        with self._decide:
            p = self._pending(actor, pid)
            line = self._raw_proposal(pid)
            if p["kind"] == "resolve":
                _, amounts = self.amounts(str(p["finding_key"]))
                proposed = line.get("amounts")
                if proposed is not None and Amounts(**proposed) != amounts:
                    raise Conflict(
                        f"{p['finding_key']}: its amounts changed since it was proposed; reject it"
                    )
            elif p["kind"] == "match":
                self._check_match_sides(str(p["order"]), dict(p["payments"] or {}))
            self.trail.record(
                "approve",
                {"proposal": pid, "finding_key": p["finding_key"]},
                note=text,
                who=actor.name,
            )
            applied = {"proposal": pid, "approved_by": actor.name}
            if p["kind"] == "resolve":
                self.trail.append(
                    "resolve",
                    [(str(p["finding_key"]), Amounts(**line["amounts"]))],
                    note=p["note"],
                    reason=str(p["reason"]),
                    who=str(p["maker"]),
                    fields=applied,
                )
            else:
                match = {
                    k: line[k] for k in ("order", "order_amount_minor", "currency", "payments")
                }
                if line.get("finding_key"):
                    match["finding_key"] = line["finding_key"]
                self.trail.record(
                    "match", {**match, **applied}, note=p["note"], who=str(p["maker"])
                )
        return Outcome(applied=True, proposal=pid)

    def reject(self, actor: Actor, pid: str, note: Any) -> Outcome:
        """Reject another person's proposal with a note (approver or admin only)."""
        text = _text(note, "note")
        self._may(actor, "approver", "reject proposals")
        with self._decide:
            p = self._pending(actor, pid)
            self.trail.record(
                "reject",
                {"proposal": pid, "finding_key": p["finding_key"]},
                note=text,
                who=actor.name,
            )
        return Outcome(applied=True, proposal=pid)

    def _pending(self, actor: Actor, pid: str) -> dict[str, Any]:
        p = self._proposal(pid)
        if p["maker"] == actor.name:
            raise Forbidden("four eyes: a proposal is approved or rejected by someone else")
        if p["state"] != "pending":
            raise Conflict(f"proposal {pid} is already {p['state']} by {p['decided_by']}")
        return p

    def _raw_proposal(self, pid: str) -> dict[str, Any]:
        for line in self.trail.records(["propose"]):
            if line.get("proposal") == pid:
                return line
        raise NotFound(f"no proposal {pid}")

    # -- actions on findings -------------------------------------------------------------

    @staticmethod
    def _may(actor: Actor, needed: str, what: str) -> None:
        if not at_least(actor.role, needed):
            raise Forbidden(f"a {actor.role} may not {what}")

    def assign(self, actor: Actor, key: str, owner: Any, note: Any) -> Outcome:
        """Give a finding an owner (empty: nobody)."""
        self._may(actor, "preparer", "assign findings")
        who = _text(owner, "owner", required=False)
        text = _text(note, "note", required=False)
        _, amounts = self.amounts(key)
        self.trail.append("assign", [(key, amounts)], note=text, owner=who or "", who=actor.name)
        return Outcome(applied=True)

    def comment(self, actor: Actor, key: str, note: Any) -> Outcome:
        """A note on a finding, in its trail; its state does not change."""
        self._may(actor, "preparer", "comment")
        text = _text(note, "note")
        self.amounts(key)  # it must exist
        self.trail.record("comment", {"finding_key": key}, note=text, who=actor.name)
        return Outcome(applied=True)

    def resolve(self, actor: Actor, key: str, reason: Any, note: Any) -> Outcome:
        """Resolve by hand with a reason; a write-off, or an amount above the threshold,
        becomes a proposal."""
        self._may(actor, "preparer", "resolve findings")
        if reason not in REASONS:
            raise Invalid(f"reason must be one of {', '.join(REASONS)}")
        text = _text(note, "note")
        assert text is not None
        row, amounts = self.amounts(key)
        threshold = self.settings.approval_threshold_minor
        big = (
            threshold is not None
            and row["amount_minor"] is not None
            and abs(int(row["amount_minor"])) > threshold
        )
        if reason in FOUR_EYES_REASONS or big:
            return self._propose(
                actor,
                "resolve",
                key,
                text,
                {
                    "reason": reason,
                    "amounts": {
                        "currency": amounts.currency,
                        "amount_minor": amounts.amount_minor,
                        "sides": amounts.sides,
                    },
                    "currency": row["currency"],
                    "amount_minor": row["amount_minor"],
                },
            )
        self.trail.append(
            "resolve", [(key, amounts)], note=text, reason=str(reason), who=actor.name
        )
        return Outcome(applied=True)

    # -- bulk ------------------------------------------------------------------------------

    def bulk(
        self, actor: Actor, filters: QueueFilters, data: Mapping[str, Any], *, preview: bool
    ) -> dict[str, Any]:
        """Assign or resolve every finding the filters keep (at most BULK_MAX): with
        `preview`, only say what it would touch; else one batch of trail lines sharing a
        `batch` id (undone together by `undo_batch`). Resolutions that need an approver
        become one proposal each."""
        action = data.get("action")
        if action not in ("assign", "resolve"):
            raise Invalid("action must be assign or resolve")
        self._may(actor, "preparer", f"{action} findings")
        note = _text(data.get("note"), "note", required=action == "resolve" and not preview)
        owner = _text(data.get("owner"), "owner", required=action == "assign" and not preview)
        reason = data.get("reason")
        if action == "resolve" and reason not in REASONS:
            raise Invalid(f"reason must be one of {', '.join(REASONS)}")
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = self.queue(filters, 500, cursor)
            items += page.items
            if len(items) > BULK_MAX:
                raise Invalid(f"more than {BULK_MAX:,} findings: narrow the filters")
            cursor = page.next
            if cursor is None:
                break
        threshold = self.settings.approval_threshold_minor

        def approval(item: dict[str, Any]) -> bool:
            amount = item["amount_minor"]
            return action == "resolve" and (
                reason in FOUR_EYES_REASONS
                or (threshold is not None and amount is not None and abs(int(amount)) > threshold)
            )

        needs = [i for i in items if approval(i)]
        if preview:
            return {
                "count": len(items),
                "needs_approval": len(needs),
                "keys": [i["finding_key"] for i in items[:20]],
            }
        batch = f"B{datetime.now(UTC):%Y%m%d}-{secrets.token_hex(4)}"
        events = [
            NewEvent(
                str(action),
                i["finding_key"],
                amounts_of(i["check_name"], i["currency"], i["amount_minor"], i["detail"]),
                note=note,
                owner=owner if action == "assign" else None,
                reason=str(reason) if action == "resolve" else None,
                fields={"batch": batch},
            )
            for i in items
            if not approval(i)
        ]
        self.trail.append_events(events, who=actor.name)
        proposals = []
        for i in needs:
            amounts = amounts_of(i["check_name"], i["currency"], i["amount_minor"], i["detail"])
            outcome = self._propose(
                actor,
                "resolve",
                i["finding_key"],
                note or "",
                {
                    "reason": reason,
                    "amounts": {
                        "currency": amounts.currency,
                        "amount_minor": amounts.amount_minor,
                        "sides": amounts.sides,
                    },
                    "currency": i["currency"],
                    "amount_minor": i["amount_minor"],
                    "batch": batch,
                },
            )
            proposals.append(outcome.proposal)
        return {"batch": batch, "applied": len(events), "proposals": proposals}

    def undo_batch(self, actor: Actor, batch: str, note: Any) -> int:
        """Reopen every finding whose latest work event is still the batch's (an `unack`
        line each, carrying `undoes`); the count."""
        self._may(actor, "preparer", "undo a batch")
        text = _text(note, "note", required=False)
        latest: dict[str, AckEvent] = {}
        seen = False
        for e in self.events():
            if e.action in ("ack", "unack", "assign", "resolve"):
                latest[e.finding_key] = e
                seen = seen or e.fields.get("batch") == batch
        if not seen:
            raise NotFound(f"no batch {batch}")
        keys = [k for k, e in latest.items() if e.fields.get("batch") == batch]
        events = [NewEvent("unack", k, None, note=text, fields={"undoes": batch}) for k in keys]
        self.trail.append_events(events, who=actor.name)
        return len(events)

    # -- matches ---------------------------------------------------------------------------

    def _check_match_sides(self, order: str, payments: Mapping[str, Any]) -> dict[str, Any]:
        with self._read() as con:
            row = con.execute(read_sql("workbench/match_order.sql"), {"order": order}).fetchone()
            if row is None:
                raise Invalid(f"{order} is no order of the books (reference or order_id)")
            found = dict(
                con.execute(
                    read_sql("workbench/match_payments.sql"), {"ids": list(payments)}
                ).fetchall()
            )
        missing = [p for p in payments if p not in found]
        if missing:
            raise Invalid(f"{', '.join(missing)}: no such live payment")
        for pid, amount in payments.items():
            if amount is not None and found[pid] != amount:
                raise Conflict(f"payment {pid} changed its amount since it was proposed")
        return {
            "order": order,
            "order_amount_minor": row[0],
            "currency": row[1],
            "payments": {p: found[p] for p in payments},
        }

    def propose_match(
        self, actor: Actor, order: Any, payments: Any, note: Any, *, key: str | None = None
    ) -> Outcome:
        """A manual match of a books order with payments: always a proposal."""
        self._may(actor, "preparer", "match")
        name = _text(order, "order")
        text = _text(note, "note")
        if (
            not isinstance(payments, list)
            or not payments
            or not all(isinstance(p, str) and p for p in payments)
        ):
            raise Invalid("payments must be a non-empty list of payment ids")
        assert name is not None
        assert text is not None
        fields = self._check_match_sides(name, dict.fromkeys(payments))
        amount = fields["order_amount_minor"]
        return self._propose(
            actor,
            "match",
            key,
            text,
            {**fields, "amount_minor": amount},
        )

    def accept_suggestion(self, actor: Actor, key: str, note: Any) -> Outcome:
        """Accept a `ledger_suggested_match` finding's candidate: a proposal of its match."""
        self._may(actor, "preparer", "match")
        prefix = "ledger_suggested_match:"
        if not key.startswith(prefix):
            raise Invalid(f"{key} is not a ledger_suggested_match finding")
        order, _, issue = key.removeprefix(prefix).rpartition(":")
        with self._read() as con:
            rows = con.execute(read_sql("workbench/suggestion.sql"), {"order": order}).fetchall()
        if not rows:
            raise NotFound(f"{key}: no suggestion for {order} in the latest run")
        if len(rows) > 1 or rows[0][1] > 1 or issue == "ambiguous":
            raise Invalid(f"{key} is ambiguous: make a manual match naming the payment")
        return self.propose_match(actor, order, [str(rows[0][0])], note, key=key)

    # -- the close ------------------------------------------------------------------------

    def close_view(self, month: str) -> dict[str, Any]:
        """The month's roll-forward, its open items (the first 200) and its sign-off."""
        from recon.close import parse_period
        from recon.close.pack import period_status
        from recon.close.period import compute_period

        period = _period(month, parse_period)
        events = self.events()
        with self._read() as con:
            figures = compute_period(con, period, self.trail.path)
        frozen = period_status(events, period)
        open_items = figures.open_items.slice(0, 200).to_pylist()
        return {
            "period": period.name,
            "rollforward": [
                {k: _plain(v) for k, v in r.items()} for r in figures.rollforward.to_pylist()
            ],
            "open_items": [{k: _plain(v) for k, v in r.items()} for r in open_items],
            "open_count": figures.open_items.num_rows,
            "incomplete": [r.run_id for r in figures.incomplete],
            "ended": datetime.now(UTC) >= period.end,  # before: only a provisional sign-off
            "signed_off": None
            if frozen is None
            else {
                "by": frozen.fields.get("signed_off_by") or frozen.who,
                "at": _plain(frozen.at),
                "note": frozen.note,
                "provisional": bool(frozen.fields.get("provisional")),
            },
        }

    def sign_off(
        self, actor: Actor, month: str, note: Any, reports: Path, *, provisional: bool = False
    ) -> Path:
        """Sign the month off (approver or admin) and write its pack; the pack's xlsx. A month
        that has not ended is signed off only `provisional` (recon close --provisional)."""
        from recon.close import SignOff, close_period, parse_period

        self._may(actor, "approver", "sign a period off")
        text = _text(note, "note")
        assert text is not None
        period = _period(month, parse_period)
        paths = close_period(
            self.db,
            self.trail.path,
            reports,
            period,
            sign_off=SignOff(actor.name, text, provisional=provisional),
            accept_incomplete=True,
            who=actor.name,
        )
        return paths.xlsx

    def pack(self, month: str, reports: Path) -> Path:
        """The month's close pack (xlsx), written as a draft unless it is signed off."""
        from recon.close import ClosedError, close_period, parse_period

        period = _period(month, parse_period)
        xlsx = reports / f"close-{period.name}" / "close.xlsx"
        try:
            close_period(self.db, self.trail.path, reports, period, accept_incomplete=True)
        except ClosedError:
            if not xlsx.exists():
                raise
        return xlsx


def _period(month: str, parse: Any) -> Any:
    from recon.errors import ConfigError

    try:
        return parse(month)
    except ConfigError as exc:
        raise Invalid(str(exc)) from None


def _rows(
    con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any], table: str
) -> list[dict[str, Any]]:
    """The rows of one of the finding page's queries; none when the table is missing."""
    exists = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [table]
    ).fetchone()
    if not exists or not exists[0]:
        return []
    cur = con.execute(read_sql(name), params)
    names = [d[0] for d in cur.description]
    return [{n: _plain(v) for n, v in zip(names, r, strict=True)} for r in cur.fetchall()]


def _differs(books: list[dict[str, Any]], provider: list[dict[str, Any]]) -> list[str]:
    """The fields in which the books side and the provider side disagree."""
    if not books or not provider:
        return []
    b, p = books[0], provider[0]
    out: list[str] = []
    for name in ("amount_minor", "currency", "status", "reference"):
        if name in b and name in p and b[name] != p[name]:
            out.append(name)
    return out
