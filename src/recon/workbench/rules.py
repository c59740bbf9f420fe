"""Who may do what, in one place: the roles, the four eyes, and who acts from the command line.

Every action of the workbench's service (recon.workbench.service) — from a page, the JSON
API, the CLI or an imported worklist — is taken by an `Actor` and checked here first.

The command line's actor (`cli_actor`): with a users file beside the warehouse that holds
users (`recon users add`), the CLI user is `RECON_USER`, else the OS login name, and must be
one of them, enabled; they act with their role and under the four eyes, exactly as in the
browser. With no users file (or none in it), the CLI is a single operator's tool as before:
`who` is `RECON_USER` or `os:<name>`, every action is allowed and applies at once.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recon.errors import ReconError, UsageError
from recon.findings.acks import who_acts
from recon.workbench.users import UserStore, at_least, users_path

__all__ = [
    "FOUR_EYES_REASONS",
    "Actor",
    "Conflict",
    "Forbidden",
    "Invalid",
    "NotFound",
    "cli_actor",
    "may",
    "needs_approval",
]

#: A resolution with one of these reasons is always a proposal (under the four eyes).
FOUR_EYES_REASONS = ("written_off",)
#: What each action needs (the least role); reading needs none beyond a login.
NEEDED = {
    "ack": "preparer",
    "unack": "preparer",
    "assign": "preparer",
    "resolve": "preparer",
    "comment": "preparer",
    "match": "preparer",
    "unmatch": "preparer",
    "undo": "preparer",
    "approve": "approver",
    "reject": "approver",
    "sign_off": "approver",
    "reopen": "approver",
    "import": "preparer",
}
_DOING = {
    "ack": "acknowledge findings",
    "unack": "reopen findings",
    "assign": "assign findings",
    "resolve": "resolve findings",
    "comment": "comment",
    "match": "match",
    "unmatch": "undo a match",
    "undo": "undo a batch",
    "approve": "approve proposals",
    "reject": "reject proposals",
    "sign_off": "sign a period off",
    "reopen": "reopen a period",
    "import": "import a worklist",
}


class _Refused(UsageError):
    """A refusal said as it is (the CLI: one line, exit 2; the API: its own status)."""

    def __init__(self, problem: str) -> None:
        super().__init__("", problem)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.problem,))


class Forbidden(_Refused):
    """The user's role may not do this, or they made the proposal they would approve."""


class NotFound(_Refused):
    """No such finding, proposal, batch or view."""


class Invalid(_Refused):
    """The request is malformed (a missing note, an unknown reason, …)."""


class Conflict(ReconError):
    """The thing changed under the request: a proposal already decided, an amount moved."""


@dataclass(frozen=True)
class Actor:
    """Who acts: a logged-in user (or a CLI user named in the users file) with their role.
    `four_eyes` False: the single operator of a warehouse without users (the CLI as it
    always was): every action allowed, nothing becomes a proposal."""

    name: str
    role: str
    four_eyes: bool = True


def may(actor: Actor, action: str) -> None:
    """Refuse (Forbidden) an action the actor's role may not take."""
    needed = NEEDED[action]
    if actor.four_eyes and not at_least(actor.role, needed):
        raise Forbidden(f"{actor.name} is a {actor.role}: a {actor.role} may not {_DOING[action]}")


def needs_approval(
    actor: Actor, reason: str | None, amount_minor: int | None, threshold: int | None
) -> bool:
    """Whether a resolution becomes a proposal: under the four eyes, a write-off, or an
    amount (its own minor units, absolute) above the threshold."""
    if not actor.four_eyes:
        return False
    big = threshold is not None and amount_minor is not None and abs(int(amount_minor)) > threshold
    return reason in FOUR_EYES_REASONS or big


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return f"uid-{os.getuid()}"


def cli_actor(db: Path) -> Actor:
    """Who acts from the command line on warehouse `db` (see the module docstring)."""
    store = UserStore(users_path(db))
    if not store.path.exists() or not store.list():
        return Actor(who_acts(), "admin", four_eyes=False)
    named = (os.environ.get("RECON_USER") or "").strip()
    name = named or _login()
    user = store.get(name)
    if user is None:
        said = f"RECON_USER={named}" if named else f"the OS user {name} (RECON_USER is not set)"
        raise Forbidden(
            f"{said} is no user of the workbench ({store.path}): set RECON_USER to your "
            "user name (recon users list)"
        )
    if user.disabled:
        raise Forbidden(f"user {name} is disabled (recon users reset enables them again)")
    return Actor(user.name, user.role)
