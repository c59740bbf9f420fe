"""Saved views: a user's filter sets of the queue, kept under a name in the workbench's own
file beside the warehouse (`data/recon.duckdb` -> `data/recon.views.json`, mode 0600;
recon.workbench.store), never in a cookie. Each user sees and changes only their own.

A view holds the queue's filters as a query string's values (recon.workbench.queue's
`QueueFilters.to_query`): checked when saved, so a saved view always opens. Saving a name
again replaces that view. A view is a preference, not a decision: no trail line.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recon.workbench.queue import QueueFilters
from recon.workbench.rules import Invalid, NotFound
from recon.workbench.store import JsonFile

__all__ = ["MAX_NAME", "MAX_VIEWS", "ViewStore", "views_path"]

MAX_NAME = 60
MAX_VIEWS = 50  # per user


def views_path(db: Path) -> Path:
    """The saved views of the warehouse `db`."""
    return db.with_name(f"{db.stem}.views.json")


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("a view needs a name")
    name = " ".join(value.split())
    if len(name) > MAX_NAME:
        raise Invalid(f"a view's name is at most {MAX_NAME} characters")
    if not name.isprintable():
        raise Invalid("a view's name is printable text")
    return name


class ViewStore:
    """The saved views file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = JsonFile(
            path, lambda: {"views": {}}, lambda data: isinstance(data.get("views"), dict)
        )

    def list(self, user: str) -> list[dict[str, Any]]:
        """The user's views, by name: {name, filters (a query string's values), saved_at}."""
        mine = self._file.read()["views"].get(user) or {}
        return [{"name": n, **v} for n, v in sorted(mine.items(), key=lambda i: i[0].lower())]

    def save(self, user: str, name: Any, filters: Mapping[str, Any]) -> dict[str, Any]:
        """Save (or replace) the user's view `name` of `filters` (checked as the queue
        checks them; `cursor` and `limit` are not filters and are dropped)."""
        title = _name(name)
        query = QueueFilters.from_query(
            {str(k): str(v) for k, v in filters.items() if v is not None and v != ""}
        ).to_query()
        stamp = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        with self._file.changed() as data:
            mine = data["views"].setdefault(user, {})
            if title not in mine and len(mine) >= MAX_VIEWS:
                raise Invalid(f"at most {MAX_VIEWS} saved views: delete one first")
            mine[title] = {"filters": query, "saved_at": stamp}
        return {"name": title, "filters": query, "saved_at": stamp}

    def delete(self, user: str, name: str) -> None:
        """Delete the user's view `name` (NotFound if they have none of that name)."""
        title = _name(name)
        with self._file.changed() as data:
            mine = data["views"].get(user) or {}
            if title not in mine:
                raise NotFound(f"no saved view {title!r}")
            del mine[title]
