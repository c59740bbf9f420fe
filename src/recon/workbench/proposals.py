"""The service's four eyes (recon.workbench.service): the proposals, and an approver's
decision on them.

A proposal is a `propose` line of the trail (the maker as `who`, the note, what is proposed
and the finding's amounts as proposed). An approver other than the maker approves it — an
`approve` line, then the action itself, written with `who` = the maker and `approved_by`,
`proposal` fields — or rejects it with a note (a `reject` line). A proposal is decided once:
the check and the lines are made under the trail's lock, so two approvers (two servers, a
server and `recon proposals approve`) cannot both decide it.
"""

from __future__ import annotations

from typing import Any

from recon.findings.acks import Amounts
from recon.workbench.base import Outcome, plain, text_of
from recon.workbench.matching import MatchingPart
from recon.workbench.rules import Actor, Conflict, Forbidden, NotFound, may

__all__ = ["PENDING", "ProposalsPart"]

PENDING = "pending"
STATES = ("pending", "approved", "rejected")


class ProposalsPart(MatchingPart):
    """Proposals: listed, approved, rejected."""

    def proposals(self, state: str | None = PENDING) -> list[dict[str, Any]]:
        """Proposals, newest first; `state` pending, approved, rejected or None (all)."""
        found: dict[str, dict[str, Any]] = {}
        for e in self.scan():
            pid = e.fields.get("proposal")
            if not isinstance(pid, str):
                continue
            if e.action == "propose":
                found[pid] = {
                    "id": pid,
                    "kind": e.fields.get("kind"),
                    "finding_key": e.finding_key or None,
                    "maker": e.who,
                    "made_at": plain(e.at),
                    "note": e.note,
                    "reason": e.reason,
                    "order": e.fields.get("order"),
                    "payments": e.fields.get("payments"),
                    "currency": e.fields.get("currency"),
                    "amount_minor": e.fields.get("amount_minor"),
                    "forced": e.fields.get("forced"),
                    "batch": e.fields.get("batch"),
                    "state": PENDING,
                    "decided_by": None,
                    "decided_at": None,
                    "decision_note": None,
                }
            elif e.action in ("approve", "reject") and found.get(pid, {}).get("state") == PENDING:
                found[pid].update(
                    state="approved" if e.action == "approve" else "rejected",
                    decided_by=e.who,
                    decided_at=plain(e.at),
                    decision_note=e.note,
                )
        out = [p for p in found.values() if state is None or p["state"] == state]
        return sorted(out, key=lambda p: str(p["made_at"]), reverse=True)

    def pending_resolutions(self) -> dict[str, dict[str, Any]]:
        """Per finding key: its pending resolution proposal, if any."""
        return {
            str(p["finding_key"]): p
            for p in self.proposals(PENDING)
            if p["kind"] == "resolve" and p["finding_key"]
        }

    def _pending(self, actor: Actor, pid: str) -> dict[str, Any]:
        for p in self.proposals(None):
            if p["id"] == pid:
                break
        else:
            raise NotFound(f"no proposal {pid}")
        if p["maker"] == actor.name:
            raise Forbidden("four eyes: a proposal is approved or rejected by someone else")
        if p["state"] != PENDING:
            raise Conflict(f"proposal {pid} is already {p['state']} by {p['decided_by']}")
        return p

    def _raw_proposal(self, pid: str) -> dict[str, Any]:
        for line in self.trail.records(["propose"]):
            if line.get("proposal") == pid:
                return line
        raise NotFound(f"no proposal {pid}")

    def approve(self, actor: Actor, pid: str, note: Any) -> Outcome:
        """Approve another person's proposal and apply it (approver or admin only)."""
        text = text_of(note, "note", required=False)
        may(actor, "approve")
        with self._decide, self.writing():
            p = self._pending(actor, pid)
            line = self._raw_proposal(pid)
            if p["kind"] == "resolve":
                key = str(p["finding_key"])
                now = self.target(key).amounts
                proposed = line.get("amounts")
                if proposed is not None and Amounts(**proposed) != now:
                    raise Conflict(f"{key}: its amounts changed since it was proposed; reject it")
            else:
                self.match_holds(line)
            self.trail.record(
                "approve",
                {"proposal": pid, "finding_key": p["finding_key"]},
                note=text,
                who=actor.name,
            )
            if p["kind"] == "resolve":
                self.trail.append(
                    "resolve",
                    [(str(p["finding_key"]), Amounts(**line["amounts"]))],
                    note=p["note"],
                    reason=str(p["reason"]),
                    who=str(p["maker"]),
                    fields={"proposal": pid, "approved_by": actor.name},
                )
            else:
                self.apply_match(line, str(p["maker"]), pid, actor.name)
        return Outcome(applied=True, proposal=pid)

    def reject(self, actor: Actor, pid: str, note: Any) -> Outcome:
        """Reject another person's proposal with a note (approver or admin only)."""
        text = text_of(note, "note")
        may(actor, "reject")
        with self._decide, self.writing():
            p = self._pending(actor, pid)
            self.trail.record(
                "reject",
                {"proposal": pid, "finding_key": p["finding_key"]},
                note=text,
                who=actor.name,
            )
        return Outcome(applied=True, proposal=pid)
