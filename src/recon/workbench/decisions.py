"""What an action on a finding comes to (recon.workbench.service): the trail's standing
decisions read once (`Standing`), the decision on one event (`Decision`: applied, proposed,
or nothing), and what a whole action did (`WorkDone`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from recon.findings.acks import AckEvent, NewEvent
from recon.findings.work import Work, repeats
from recon.workbench.base import Outcome, Target, new_id
from recon.workbench.rules import Actor, needs_approval

__all__ = ["SHOWN", "VERBS", "Decision", "Standing", "WorkDone"]

SHOWN = 20  # repeated decisions and proposals named one by one
VERBS = {
    "ack": "acknowledged",
    "assign": "assigned",
    "resolve": "resolved manually",
    "unack": "reopened",
}


@dataclass(frozen=True)
class Decision:
    """What one work event on a finding comes to: its `line` to append (the event, or a
    `propose` line whose id is `proposal`), or nothing: it repeats the `standing` decision,
    or the maker's alike proposal `waiting` still waits."""

    line: NewEvent | None = None
    proposal: str | None = None
    standing: AckEvent | None = None
    waiting: str | None = None


@dataclass(frozen=True)
class Standing:
    """What the trail says of every finding as read once (Workbench.standing)."""

    works: Mapping[str, Work]
    pending: Mapping[tuple[str, str], tuple[str, str | None, Any]]
    threshold: int | None

    def decide(self, actor: Actor, target: Target, event: NewEvent) -> Decision:
        """The decision on `event` (an action of `actor` on `target`): nothing when it only
        repeats the standing decision (recon.findings.work.repeats) or the actor already
        proposed it alike; a proposal when it is a resolution under the four eyes; else
        the event itself."""
        key = target.finding_key
        today = datetime.now(UTC).date()
        standing = repeats(self.works.get(key), event, today)
        if standing is not None:
            return Decision(standing=standing)
        if event.action != "resolve" or not needs_approval(
            actor, event.reason, target.amount_minor, self.threshold
        ):
            return Decision(line=event)
        waiting = self.pending.get((key, actor.name))
        if waiting is not None and waiting[1:] == (event.reason, target.amounts):
            return Decision(waiting=waiting[0])
        pid = new_id("P")
        fields = {"proposal": pid, "kind": "resolve", "currency": target.currency}
        line = NewEvent(
            "propose",
            key,
            target.amounts,
            note=event.note,
            reason=event.reason,
            fields={**fields, "amount_minor": target.amount_minor, **event.fields},
        )
        return Decision(line=line, proposal=pid)


@dataclass
class WorkDone:
    """What one action on findings did: lines applied, proposals made (their ids, the first
    `keep`), and what it left as it stood: decisions it only repeated (`again`, the first
    SHOWN, and how many) and resolutions the same maker already proposed alike, still
    waiting for an approver (`waiting`)."""

    keep: int = SHOWN
    applied: int = 0
    proposed: int = 0
    proposals: list[str] = field(default_factory=list)
    again: list[AckEvent] = field(default_factory=list)
    repeated: int = 0
    waiting: list[tuple[str, str]] = field(default_factory=list)  # key, proposal
    waited: int = 0

    def count(self, key: str, decision: Decision) -> None:
        """Count one finding's decision."""
        if decision.standing is not None:
            self.repeated += 1
            if len(self.again) < SHOWN:
                self.again.append(decision.standing)
        elif decision.waiting is not None:
            self.waited += 1
            if len(self.waiting) < SHOWN:
                self.waiting.append((key, decision.waiting))
        elif decision.proposal is not None:
            self.proposed += 1
            if len(self.proposals) < self.keep:
                self.proposals.append(decision.proposal)
        else:
            self.applied += 1

    def outcome(self) -> Outcome:
        """The outcome of an action on one finding."""
        if self.proposals:
            return Outcome(applied=False, proposal=self.proposals[0])
        if self.waiting:
            key, pid = self.waiting[0]
            return Outcome(False, pid, f"{key} already waits for an approver ({pid})")
        if self.again:
            e = self.again[0]
            verb = VERBS.get(e.action, e.action)
            return Outcome(False, None, f"already {verb} by {e.who} on {e.at:%Y-%m-%d}")
        return Outcome(applied=self.applied > 0)
