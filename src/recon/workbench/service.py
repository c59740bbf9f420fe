"""The one service layer of the workbench: every action — from the pages, the JSON API, the
CLI (`recon findings`, `recon match`, `recon close`, `recon proposals`) and an imported
worklist — goes through `Workbench`, which checks the roles and the four eyes
(recon.workbench.rules) and writes the audit trail (recon.findings.acks) with the acting
user as `who`.

Four eyes: a write-off (`resolve` with reason `written_off`), a manual match, an accepted
suggestion, and a manual resolution of a finding above RECON_APPROVAL_THRESHOLD_MINOR are
*proposals* (recon.workbench.proposals); the single operator of a warehouse without users
(the CLI as it always was) applies them at once.

The parts: recon.workbench.base (the warehouse and trail, shared), .matching (matches),
.proposals (the approvers' decisions), .closing (the month's close); here the queue, a
finding, and the actions on findings. The warehouse is opened read-only for each call and
closed before it returns, so a night can publish and `recon query` read meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import date
from pathlib import Path
from typing import Any

import duckdb

from recon.findings.acks import AckEvent, NewEvent
from recon.findings.work import REASONS, work_events
from recon.warehouse.sql import read_sql
from recon.workbench.base import Outcome, Target, new_id, plain, text_of
from recon.workbench.closing import ClosingPart
from recon.workbench.decisions import SHOWN, Decision, Standing, WorkDone
from recon.workbench.proposals import ProposalsPart
from recon.workbench.queue import ROOT_CAUSES, Page, QueueFilters, define_root_cause, read_queue
from recon.workbench.rules import Actor, Invalid, NotFound, may, needs_approval

__all__ = [
    "BULK_MAX",
    "Decision",
    "Outcome",
    "Standing",
    "Target",
    "WorkDone",
    "Workbench",
    "for_cli",
]

BULK_MAX = 5000


class Workbench(ProposalsPart, ClosingPart):
    """The workbench on one warehouse and its audit trail."""

    # -- reading -------------------------------------------------------------------------

    def queue(self, filters: QueueFilters, limit: int, cursor: str | None) -> Page:
        """One page of the queue."""
        events = self.events()
        with self._read_queue() as con:
            return read_queue(con, events, filters, limit, cursor, self.settings)

    def groups(self) -> dict[str, Any]:
        """The queue's headings: the latest run's unresolved findings counted per check
        (`groups`, each with its root causes) and per root cause (`root_causes`, each with
        its checks), whatever their work state; recon.workbench.queue says how a root cause
        is read."""
        with self._read_queue() as con:
            define_root_cause(con)
            rows = con.execute(read_sql("workbench/groups.sql")).fetchall()
        checks: dict[str, dict[str, Any]] = {}
        causes: dict[str, dict[str, Any]] = {}
        for check, severity, cause, count in rows:
            n = int(count)
            c = checks.setdefault(
                check, {"check_name": check, "severity": severity, "findings": 0, "causes": {}}
            )
            c["findings"] += n
            c["causes"][cause] = n
            k = causes.setdefault(cause, {"root_cause": cause, "findings": 0, "checks": {}})
            k["findings"] += n
            k["checks"][check] = n
        ordered = [causes[c] for c in ROOT_CAUSES if c in causes]
        return {"groups": list(checks.values()), "root_causes": ordered}

    def finding(self, key: str) -> dict[str, Any]:
        """One finding: its fields, work state, sides (books, provider) and candidates."""
        with self._read() as con:
            row = self._finding_row(con, key)
            eid = row["entity_id"]
            books = _rows(con, "workbench/books_side.sql", {"id": eid}, "ledger_orders")
            provider = _rows(con, "workbench/provider_side.sql", {"id": eid}, "payments")
            candidates = _rows(
                con, "workbench/candidates.sql", {"order": eid}, "ledger_suggestions"
            )
            page = read_queue(
                con, self.events(), QueueFilters(state=None, key=key), 1, None, self.settings
            )
        item = page.items[0] if page.items else {}
        out = {k: plain(v) for k, v in row.items() if k not in ("latest_at",)}
        out.update({k: item.get(k) for k in ("work_state", "owner", "root_cause")})
        out.update({k: item.get(k) for k in ("known_days", "item_age_days", "due_at")})
        out.update(
            {
                "sides": {"books": books, "provider": provider},
                "candidates": candidates,
                "differs": _differs(books, provider),
                "proposals": [p for p in self.proposals(None) if p["finding_key"] == key],
            }
        )
        return out

    def trail_lines(self, key: str | None) -> list[dict[str, Any]]:
        """The trail's lines about `key` (or every line), oldest first."""
        out: list[dict[str, Any]] = []
        for e in self.scan():
            if key is not None and e.finding_key != key:
                continue
            fields: dict[str, Any] = dict(e.fields)
            out.append(
                {
                    "seq": e.seq,
                    "at": plain(e.at),
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

    # -- actions on findings -------------------------------------------------------------

    def standing(self) -> Standing:
        """What the trail says now, in one pass: per key its work (recon.findings.work), and
        per (key, maker) a pending resolution proposal. Read it under `writing()` for the
        decisions made from it to hold when their lines are written."""
        pending: dict[tuple[str, str], tuple[str, str | None, Any]] = {}
        by_id: dict[str, tuple[str, str]] = {}

        def feed() -> Iterator[AckEvent]:
            for e in self.scan():
                pid = str(e.fields.get("proposal"))
                if e.action == "propose" and e.fields.get("kind") == "resolve":
                    pending[(e.finding_key, e.who)] = (pid, e.reason, e.amounts)
                    by_id[pid] = (e.finding_key, e.who)
                elif e.action in ("approve", "reject") and pid in by_id:
                    whose = by_id.pop(pid)
                    if pending.get(whose, ("",))[0] == pid:
                        del pending[whose]
                yield e

        works = work_events(feed())
        return Standing(works, pending, self.settings.approval_threshold_minor)

    def work(
        self,
        actor: Actor,
        action: str,
        targets: Iterable[Target],
        *,
        note: str | None = None,
        until: date | None = None,
        owner: str | None = None,
        reason: str | None = None,
        fields: Mapping[str, Any] | None = None,
        keep: int = SHOWN,
    ) -> WorkDone:
        """Apply `action` (ack, unack, assign, resolve) to every finding of `targets` (a
        stream: a CLI action by filter on a million), as one append under the trail's
        lock, each as `Standing.decide` says: applied, a proposal, or nothing (it repeats
        what stands, or the actor's alike proposal still waits). The stream is read to its
        end before anything is written."""
        may(actor, action)
        if action == "resolve" and reason not in REASONS:
            raise Invalid(f"reason must be one of {', '.join(REASONS)}")
        done = WorkDone(keep=keep)
        extra = dict(fields or {})

        def lines(standing: Standing) -> Iterator[NewEvent]:
            for t in targets:
                event = NewEvent(
                    action,
                    t.finding_key,
                    None if action == "unack" else t.amounts,
                    note=note,
                    until=until,
                    owner=owner if action == "assign" else None,
                    reason=reason if action == "resolve" else None,
                    fields=extra,
                )
                decision = standing.decide(actor, t, event)
                done.count(t.finding_key, decision)
                if decision.line is not None:
                    yield decision.line

        with self.writing():
            self.trail.append_events(lines(self.standing()), who=actor.name)
        return done

    def assign(self, actor: Actor, key: str, owner: Any, note: Any) -> Outcome:
        """Give a finding an owner (empty: nobody)."""
        may(actor, "assign")
        who = text_of(owner, "owner", required=False)
        text = text_of(note, "note", required=False)
        return self.work(actor, "assign", [self.target(key)], note=text, owner=who or "").outcome()

    def comment(self, actor: Actor, key: str, note: Any) -> Outcome:
        """A note on a finding, in its trail; its state does not change."""
        may(actor, "comment")
        text = text_of(note, "note")
        self.target(key)  # it must exist
        self.trail.record("comment", {"finding_key": key}, note=text, who=actor.name)
        return Outcome(applied=True)

    def resolve(self, actor: Actor, key: str, reason: Any, note: Any) -> Outcome:
        """Resolve by hand with a reason; a write-off, or an amount above the threshold,
        becomes a proposal."""
        may(actor, "resolve")
        if reason not in REASONS:
            raise Invalid(f"reason must be one of {', '.join(REASONS)}")
        text = text_of(note, "note")
        target = self.target(key)
        return self.work(actor, "resolve", [target], note=text, reason=reason).outcome()

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
        may(actor, action)
        note = text_of(data.get("note"), "note", required=action == "resolve" and not preview)
        owner = text_of(data.get("owner"), "owner", required=action == "assign" and not preview)
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
        if preview:
            threshold = self.settings.approval_threshold_minor
            needs = [
                i
                for i in items
                if action == "resolve"
                and needs_approval(actor, reason, i["amount_minor"], threshold)
            ]
            return {
                "count": len(items),
                "needs_approval": len(needs),
                "keys": [i["finding_key"] for i in items[:20]],
            }
        batch = new_id("B")
        done = self.work(
            actor,
            str(action),
            [Target.of(i) for i in items],
            note=note,
            owner=owner,
            reason=str(reason) if action == "resolve" else None,
            fields={"batch": batch},
            keep=BULK_MAX,
        )
        return {"batch": batch, "applied": done.applied, "proposals": done.proposals}

    def undo_batch(self, actor: Actor, batch: str, note: Any) -> int:
        """Reopen every finding whose latest work event is still the batch's (an `unack`
        line each, carrying `undoes`); the count."""
        may(actor, "undo")
        text = text_of(note, "note", required=False)
        with self.writing():
            latest: dict[str, AckEvent] = {}
            seen = False
            for e in self.scan():
                if e.action in ("ack", "unack", "assign", "resolve"):
                    latest[e.finding_key] = e
                    seen = seen or e.fields.get("batch") == batch
            if not seen:
                raise NotFound(f"no batch {batch}")
            keys = [k for k, e in latest.items() if e.fields.get("batch") == batch]
            events = [NewEvent("unack", k, None, note=text, fields={"undoes": batch}) for k in keys]
            self.trail.append_events(events, who=actor.name)
        return len(events)


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
    return [{n: plain(v) for n, v in zip(names, r, strict=True)} for r in cur.fetchall()]


def _differs(books: list[dict[str, Any]], provider: list[dict[str, Any]]) -> list[str]:
    """The fields in which the books side and the provider side disagree."""
    if not books or not provider:
        return []
    b, p = books[0], provider[0]
    names = ("amount_minor", "currency", "status", "reference")
    return [n for n in names if n in b and n in p and b[n] != p[n]]


def for_cli(db: Path) -> tuple[Workbench, Actor]:
    """The service on warehouse `db` for one command, and who acts (rules.cli_actor): a
    user of the users file with their role, else the single operator."""
    from recon.workbench.config import load_workbench_settings
    from recon.workbench.rules import cli_actor

    actor = cli_actor(db)
    return Workbench(db, load_workbench_settings(), serving=False), actor
