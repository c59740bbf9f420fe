"""How a group night ended: each account's outcome and the night's (no secret: built from
the accounts' warehouses and errors)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["AccountOutcome", "GroupSummary", "worst_exit_code"]

# Worst first wins: a bad setting, aborted, incomplete, findings at --fail-on, complete.
_EXIT_RANK = {0: 0, 4: 1, 3: 2, 1: 3, 2: 4}
_STATUS_RANK = {"complete": 0, "incomplete": 1, "failed": 2, "aborted": 3}


@dataclass
class AccountOutcome:
    """How one account's night ended (no secret: built from its warehouse and errors)."""

    account: str
    status: str  # complete | incomplete | failed | aborted
    exit_code: int
    run_id: str | None = None
    reason: str | None = None
    db_path: Path | None = None
    report_dir: Path | None = None
    lines: list[str] = field(default_factory=list)


@dataclass
class GroupSummary:
    """The night of every account."""

    night_id: str
    outcomes: list[AccountOutcome]
    exit_code: int
    consolidated: Path | None = None
    page: Path | None = None

    @property
    def status(self) -> str:
        worst = max((o.status for o in self.outcomes), key=lambda s: _STATUS_RANK.get(s, 3))
        return worst if self.outcomes else "complete"


def worst_exit_code(codes: Sequence[int]) -> int:
    """The night's exit code: its worst account's."""
    return max(codes, key=lambda c: _EXIT_RANK.get(c, 3)) if codes else 0
