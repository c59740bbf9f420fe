"""The service's matches (recon.workbench.service): a books order matched with payments by
hand, a suggestion accepted, a match undone — from a page, the API, `recon match` or a
worklist's `match` row.

Under the four eyes every match is a *proposal* (a `propose` line of kind `match`, checked
as `recon match` checks: the order and the live payments must exist; a currency or an
amount beyond the tolerance is refused unless forced, and then the proposal says so). An
approver's approval applies it at once through recon.ledger.manual (the links, the findings
of both sides resolved), its `match` line written with `who` = the maker and the approver
as `approved_by`. The single operator of a warehouse without users matches at once, as
`recon match` always did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recon.errors import ConfigError
from recon.ledger.manual import (
    MatchOutcome,
    Tolerance,
    accept_suggestions,
    check_match,
    match_order,
    match_suggestion,
    undo_matches,
)
from recon.warehouse.sql import read_sql
from recon.workbench.base import Outcome, WorkbenchBase, text_of
from recon.workbench.holding import HOLDING
from recon.workbench.rules import Actor, Conflict, Invalid, NotFound, may

__all__ = ["MatchDone", "MatchingPart"]

SUGGESTION = "ledger_suggested_match:"


@dataclass(frozen=True)
class MatchDone:
    """One match asked for: applied (`outcome`) or proposed (`proposal`), with the line's
    fields and what it warned of."""

    outcome: MatchOutcome | None = None
    proposal: str | None = None
    fields: Mapping[str, Any] | None = None
    warnings: tuple[str, ...] = ()


class MatchingPart(WorkbenchBase):
    """Matches under the roles and the four eyes."""

    def tolerance(self) -> Tolerance:
        """RECON_LEDGER_TOLERANCE_MINOR / _BPS of the warehouse's settings."""
        from recon.config.settings import load_settings

        settings = load_settings(db=str(self.db))
        return Tolerance(settings.ledger_tolerance_minor, settings.ledger_tolerance_bps)

    def match(
        self,
        actor: Actor,
        order: str,
        payments: Sequence[str],
        note: str | None,
        *,
        force: bool = False,
        tolerance: Tolerance | None = None,
        key: str | None = None,
    ) -> MatchDone:
        """Match `order` with `payments`: a proposal under the four eyes, else at once."""
        may(actor, "match")
        tolerance = tolerance or self.tolerance()
        if not actor.four_eyes:
            with HOLDING.write:
                done = match_order(
                    self.db, self.trail.path, order, list(payments), note,
                    tolerance=tolerance, force=force, who=actor.name,
                )  # fmt: skip
            return MatchDone(outcome=done, fields=done.line, warnings=done.warnings)
        text = text_of(note, "note")
        assert text is not None
        with HOLDING.write:
            checked = check_match(self.db, order, list(payments), tolerance=tolerance, force=force)
        fields = {**checked.fields, "amount_minor": checked.fields["order_amount_minor"]}
        proposed = self._propose(actor, "match", key, text, fields)
        return MatchDone(proposal=proposed.proposal, fields=fields, warnings=checked.warnings)

    def propose_match(
        self, actor: Actor, order: Any, payments: Any, note: Any, *, key: str | None = None
    ) -> Outcome:
        """A manual match from a page or the API: always a proposal; a currency or an
        amount beyond the tolerance does not stop it but is named in it (`forced`)."""
        may(actor, "match")
        name = text_of(order, "order")
        text = text_of(note, "note")
        if (
            not isinstance(payments, list)
            or not payments
            or not all(isinstance(p, str) and p for p in payments)
        ):
            raise Invalid("payments must be a non-empty list of payment ids")
        assert name is not None
        try:
            done = self.match(actor, name, payments, text, force=True, key=key)
        except ConfigError as exc:
            raise Invalid(exc.problem) from None
        if done.proposal is None:  # the single operator (not a web user): applied at once
            return Outcome(applied=True)
        return Outcome(applied=False, proposal=done.proposal)

    def suggestion(self, key: str) -> tuple[str, str]:
        """The order and the one payment a `ledger_suggested_match` finding proposes."""
        if not key.startswith(SUGGESTION):
            raise Invalid(f"{key} is not a ledger_suggested_match finding")
        order, _, issue = key.removeprefix(SUGGESTION).rpartition(":")
        with self._read() as con:
            rows = con.execute(read_sql("workbench/suggestion.sql"), {"order": order}).fetchall()
        if not rows:
            raise NotFound(f"{key}: no suggestion for {order} in the latest run")
        if len(rows) > 1 or rows[0][1] > 1 or issue == "ambiguous":
            ids = ", ".join(str(r[0]) for r in rows)
            raise Invalid(
                f"{key} is ambiguous ({ids}): name the payment: recon match {order} PAYMENT"
            )
        return order, str(rows[0][0])

    def accept_suggestion(
        self,
        actor: Actor,
        key: str,
        note: Any,
        *,
        force: bool = True,
        tolerance: Tolerance | None = None,
    ) -> MatchDone:
        """Accept a `ledger_suggested_match` finding's one candidate: a proposal of its
        match under the four eyes, else matched at once (recon match KEY)."""
        may(actor, "match")
        if not actor.four_eyes:
            with HOLDING.write:
                done = match_suggestion(
                    self.db, self.trail.path, key, note,
                    tolerance=tolerance or self.tolerance(), force=force,
                )  # fmt: skip
            return MatchDone(outcome=done, fields=done.line, warnings=done.warnings)
        order, payment = self.suggestion(key)
        return self.match(actor, order, [payment], note, force=force, tolerance=tolerance, key=key)

    def accept_suggestions(
        self,
        actor: Actor,
        note: str | None,
        *,
        keys: Sequence[str] = (),
        currency: str | None = None,
        tolerance: Tolerance | None = None,
        confirm: Callable[[int], None] | None = None,
    ) -> tuple[list[MatchDone], list[str]]:
        """`recon match accept`: every unambiguous suggestion (of `keys`, of `currency`):
        the matches made or proposed, and why the others named were not."""
        may(actor, "match")
        tolerance = tolerance or self.tolerance()
        if not actor.four_eyes:
            done, skipped = accept_suggestions(
                self.db, self.trail.path, note, keys=keys, currency=currency,
                tolerance=tolerance, confirm=confirm,
            )  # fmt: skip
            return [MatchDone(outcome=d, fields=d.line, warnings=d.warnings) for d in done], skipped
        text = text_of(note, "note")
        with self._read() as con:
            rows = con.execute(
                read_sql("ledger/accept_suggestions.sql"), {"currency": currency}
            ).fetchall()
        clear = {str(r[0]): str(r[1]) for r in rows}
        wanted = [k.removeprefix(SUGGESTION).rpartition(":")[0] for k in keys] or sorted(clear)
        skipped = [f"{o}: no unambiguous proposal{f' in {currency}' if currency else ''}"
                   for o in wanted if o not in clear]  # fmt: skip
        if confirm is not None:
            confirm(sum(o in clear for o in wanted))
        made: list[MatchDone] = []
        for order in wanted:
            if order in clear:
                try:
                    made.append(self.match(actor, order, [clear[order]], text, tolerance=tolerance))
                except ConfigError as exc:
                    skipped.append(f"{order}: {exc.problem}")
        return made, skipped

    def undo_matches(self, actor: Actor, orders: list[str], note: str | None) -> int:
        """`recon match undo`: the people's matches of `orders` undone (a preparer's act,
        applied at once: the orders are matched again by the rules of the next night)."""
        may(actor, "unmatch")
        return undo_matches(self.trail.path, orders, note, who=actor.name)

    def match_holds(self, line: Mapping[str, Any]) -> None:
        """A Conflict unless the order and payments of a match proposal (its `propose`
        line) still stand with the amounts proposed."""
        order = str(line["order"])
        proposed: dict[str, Any] = dict(line.get("payments") or {})
        with HOLDING.write:
            try:
                now = check_match(self.db, order, list(proposed), force=True)
            except ConfigError as exc:
                raise Conflict(f"{order}: {exc.problem} now; reject the proposal") from None
        changed = [p for p, a in proposed.items() if now.fields["payments"][p] != a]
        if now.fields["order_amount_minor"] != line.get("order_amount_minor"):
            changed.insert(0, f"order {order}")
        if changed:
            raise Conflict(
                f"{', '.join(changed)} changed its amount since it was proposed; reject it"
            )

    def apply_match(self, line: Mapping[str, Any], maker: str, pid: str, approver: str) -> None:
        """An approved match proposal applied at once (`match_holds` checked first)."""
        extra = {"proposal": pid, "approved_by": approver}
        if line.get("finding_key"):
            extra["finding_key"] = str(line["finding_key"])
        with HOLDING.write:
            match_order(
                self.db, self.trail.path, str(line["order"]), list(line.get("payments") or {}),
                str(line.get("note") or ""), force=True, who=maker, extra=extra,
            )  # fmt: skip
