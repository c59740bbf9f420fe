"""Where recon's SQL files live, and how they are read.

In a checkout the files are in `<repo>/sql`; a built wheel carries them as `recon/sql`
(pyproject's force-include). Either way `sql_dir()` finds them.
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["read_sql", "sql_dir", "sql_statements"]


@functools.cache
def sql_dir() -> Path:
    """The folder holding migrations/, load/, reference/ and checks/."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "sql", here.parent.parent / "sql"):
        if (candidate / "migrate.sql").is_file():
            return candidate
    raise FileNotFoundError("recon's sql/ folder is missing from this installation")


@functools.cache
def read_sql(name: str) -> str:
    """The text of `sql/<name>` (e.g. `load/payments.sql`)."""
    path = (sql_dir() / name).resolve()
    if sql_dir() not in path.parents:
        raise ValueError(f"{name!r} is not inside recon's sql/ folder")
    return path.read_text(encoding="utf-8")


def sql_statements(text: str) -> list[str]:
    """Split a SQL script on `;` at line ends, dropping comment-only chunks."""
    out = []
    for chunk in text.split(";\n"):
        body = "\n".join(
            line for line in chunk.splitlines() if not line.strip().startswith("--")
        ).strip()
        if body:
            out.append(body.rstrip(";"))
    return out
