"""The workbench's users: names, roles and argon2 password hashes in a small JSON file beside
the warehouse (`data/recon.duckdb` -> `data/recon.users.json`, mode 0600).

Not in the published warehouse (recon.workbench.store: written under a lock, replaced
atomically). A password is only ever held long enough to hash or verify it; it never
reaches a log, an error or the trail.

Roles, each including the one before: viewer (reads), preparer (assigns, comments, resolves,
proposes matches and write-offs), approver (approves or rejects another person's proposals,
signs a period off), admin (the same; users are managed with `recon users` on the machine).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from recon.errors import ConfigError
from recon.workbench.store import JsonFile

__all__ = [
    "MIN_PASSWORD",
    "ROLES",
    "User",
    "UserStore",
    "at_least",
    "users_path",
]

ROLES = ("viewer", "preparer", "approver", "admin")
MIN_PASSWORD = 10
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,39}")
_HASHER = PasswordHasher()
# Verified when a name is unknown, so that a wrong name costs as long as a wrong password.
_DUMMY = _HASHER.hash("not a password of anybody")


def users_path(db: Path) -> Path:
    """The users file of the warehouse `db`."""
    return db.with_name(f"{db.stem}.users.json")


def at_least(role: str, needed: str) -> bool:
    """True if `role` may do what `needed` may."""
    return role in ROLES and ROLES.index(role) >= ROLES.index(needed)


@dataclass(frozen=True)
class User:
    """One user as listed (never with the hash)."""

    name: str
    role: str
    disabled: bool
    created_at: str


def _check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ConfigError(
            "NAME",
            "a user name is 1-40 of a-z, 0-9, '.', '_', '-', starting with a letter or digit",
        )
    return name


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise ConfigError("password", f"must be at least {MIN_PASSWORD} characters")


class UserStore:
    """The users file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = JsonFile(
            path, lambda: {"users": {}}, lambda data: isinstance(data.get("users"), dict)
        )

    def _locked(self) -> contextlib.AbstractContextManager[dict[str, Any]]:
        """The file's content, to change in place; written back atomically."""
        return self._file.changed()

    def _read(self) -> dict[str, Any]:
        try:
            return self._file.read()
        except ConfigError:
            raise ConfigError(str(self.path), "is not a users file recon wrote") from None

    def add(self, name: str, role: str, password: str) -> User:
        """A new user; a ConfigError if the name is taken or the role unknown."""
        _check_name(name)
        if role not in ROLES:
            raise ConfigError("--role", f"must be one of {', '.join(ROLES)}")
        _check_password(password)
        digest = _HASHER.hash(password)
        with self._locked() as data:
            if name in data["users"]:
                raise ConfigError("NAME", f"user {name} exists (reset its password with reset)")
            stamp = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
            data["users"][name] = {
                "role": role,
                "hash": digest,
                "disabled": False,
                "created_at": stamp,
            }
        return User(name, role, False, stamp)

    def _change(self, name: str, **values: Any) -> None:
        with self._locked() as data:
            entry = data["users"].get(name)
            if entry is None:
                raise ConfigError("NAME", f"no user {name}")
            entry.update(values)

    def disable(self, name: str) -> None:
        """The user can no longer log in; their sessions end at their next request."""
        self._change(name, disabled=True)

    def reset(self, name: str, password: str) -> None:
        """A new password (and the user enabled again)."""
        _check_password(password)
        self._change(name, hash=_HASHER.hash(password), disabled=False)

    def list(self) -> list[User]:
        """Every user, by name."""
        users = self._read()["users"]
        return [
            User(n, str(u["role"]), bool(u.get("disabled")), str(u.get("created_at", "")))
            for n, u in sorted(users.items())
        ]

    def get(self, name: str) -> User | None:
        """The user `name` if it exists."""
        entry = self._read()["users"].get(name)
        if entry is None:
            return None
        return User(name, str(entry["role"]), bool(entry.get("disabled")), "")

    def authenticate(self, name: str, password: str) -> User | None:
        """The user if `password` is theirs and they are enabled, else None."""
        entry = self._read()["users"].get(name)
        digest = str(entry["hash"]) if entry else _DUMMY
        try:
            _HASHER.verify(digest, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return None
        if entry is None or entry.get("disabled"):
            return None
        return User(name, str(entry["role"]), False, str(entry.get("created_at", "")))
