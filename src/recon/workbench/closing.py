"""The service's close (recon.workbench.service): the month's roll-forward and open items,
its sign-off and reopening (an approver's acts, from a page, the API or `recon close`), and
its pack. The pack itself is recon.close's."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recon.errors import ConfigError
from recon.workbench.base import WorkbenchBase, plain, text_of
from recon.workbench.holding import HOLDING
from recon.workbench.rules import Actor, Invalid, may

if TYPE_CHECKING:
    from recon.close.pack import ClosePaths
    from recon.close.period import Period

__all__ = ["ClosingPart"]


def _period(month: str) -> Period:
    from recon.close import parse_period

    try:
        return parse_period(month)
    except ConfigError as exc:
        raise Invalid(str(exc)) from None


class ClosingPart(WorkbenchBase):
    """The month's close."""

    def close_view(self, month: str) -> dict[str, Any]:
        """The month's roll-forward, its open items (the first 200) and its sign-off."""
        from recon.close.pack import period_status
        from recon.close.period import compute_period

        period = _period(month)
        events = self.events()
        with self._read() as con:
            figures = compute_period(con, period, self.trail.path)
        frozen = period_status(events, period)
        open_items = figures.open_items.slice(0, 200).to_pylist()
        return {
            "period": period.name,
            "rollforward": [
                {k: plain(v) for k, v in r.items()} for r in figures.rollforward.to_pylist()
            ],
            "open_items": [{k: plain(v) for k, v in r.items()} for r in open_items],
            "open_count": figures.open_items.num_rows,
            "incomplete": [r.run_id for r in figures.incomplete],
            "ended": datetime.now(UTC) >= period.end,  # before: only a provisional sign-off
            "signed_off": None
            if frozen is None
            else {
                "by": frozen.fields.get("signed_off_by") or frozen.who,
                "at": plain(frozen.at),
                "note": frozen.note,
                "provisional": bool(frozen.fields.get("provisional")),
            },
        }

    def sign_off(
        self,
        actor: Actor,
        month: str | Period,
        note: Any,
        reports: Path,
        *,
        signer: str | None = None,
        provisional: bool = False,
        accept_incomplete: bool = True,
        failed_statuses: tuple[str, ...] | None = None,
        account: str | None = None,
        reopen_note: str | None = None,
    ) -> ClosePaths:
        """Sign the month off (an approver's act) and write its pack; the pack's paths
        (recon.close.ClosePaths). `month` is a YYYY-MM text or a parsed period; `signer`
        the name written on the pack (default: the user); `reopen_note`: reopen a signed-off
        month and sign it again at once. A month that has not ended is signed off only
        `provisional`."""
        from recon.close import SignOff, close_period

        may(actor, "sign_off")
        text = text_of(note, "note")
        assert text is not None
        period = _period(month) if isinstance(month, str) else month
        with HOLDING.write:  # its line is recorded in the warehouse: no reader of ours meanwhile
            return close_period(
                self.db,
                self.trail.path,
                reports,
                period,
                sign_off=SignOff(signer or actor.name, text, provisional=provisional),
                accept_incomplete=accept_incomplete,
                failed_statuses=failed_statuses,
                account=account,
                who=actor.name,
                reopen_note=reopen_note,
            )

    def reopen(
        self,
        actor: Actor,
        period: Period,
        note: str,
        reports: Path,
        *,
        accept_incomplete: bool = False,
        failed_statuses: tuple[str, ...] | None = None,
        account: str | None = None,
    ) -> ClosePaths:
        """Reopen a signed-off period to redo it (an approver's act, `recon close
        --reopen`); the pack's paths."""
        from recon.close import close_period

        may(actor, "reopen")
        with HOLDING.write:
            return close_period(
                self.db,
                self.trail.path,
                reports,
                period,
                accept_incomplete=accept_incomplete,
                reopen_note=note,
                failed_statuses=failed_statuses,
                account=account,
                who=actor.name,
            )

    def pack(self, month: str, reports: Path) -> Path:
        """The month's close pack (xlsx), written as a draft unless it is signed off."""
        from recon.close import ClosedError, close_period

        period = _period(month)
        xlsx = reports / f"close-{period.name}" / "close.xlsx"
        try:
            with HOLDING.write:  # its own connections: none of our readers' meanwhile
                close_period(self.db, self.trail.path, reports, period, accept_incomplete=True)
        except ClosedError:
            if not xlsx.exists():
                raise
        return xlsx
