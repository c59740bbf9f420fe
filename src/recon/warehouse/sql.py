"""Where recon's SQL files live, and how they are read: the files themselves, their
statements, and the `--` header that checks (`sql/checks/`) and matching rules
(`sql/matching/`) open with.

In a checkout the files are in `<repo>/sql`; a built wheel carries them as `recon/sql`
(pyproject's force-include). Either way `sql_dir()` finds them.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import yaml

__all__ = ["HeaderError", "read_header", "read_sql", "sql_dir", "sql_statements"]

# libyaml's safe loader when PyYAML has it (the same documents, ~10x faster than the pure
# Python one: the headers of ~40 checks are read every night).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_ENTRY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:")


@functools.cache
def sql_dir() -> Path:
    """The folder holding migrations/, load/, reference/ and checks/."""
    package = Path(__file__).resolve().parents[1]  # recon/ (this module: recon/warehouse/)
    for candidate in (package / "sql", package.parents[1] / "sql"):
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


class HeaderError(ValueError):
    """A SQL file's `--` header cannot be read; the message says why (the caller names the file)."""


def read_header(text: str, *, plain: frozenset[str] = frozenset()) -> tuple[dict[str, Any], str]:
    """The `--` header at the top of a SQL file, as a mapping, and the SQL below it.

    The header is the `--` lines before the first other non-blank line. Each `key: value`
    line at the margin, with the indented lines after it, is one entry whose value is YAML
    (`[a, b]`, a number, a quoted string, a multi-line SELECT); `-- # …` lines are comments.
    A key in `plain` is taken as the text written, not as YAML (a rule's `cardinality: 1:N`
    or a description holding colons). A value that is not YAML is a `HeaderError`.
    """
    lines = text.splitlines()
    header: list[str] = []
    start = len(lines)
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("--"):
            header.append(stripped[2:].removeprefix(" "))
        elif stripped:
            start = index
            break
    if not header:
        raise HeaderError("no `--` YAML header at the top of the file")
    entries: list[tuple[str, list[str]]] = []
    for line in header:
        entry = _ENTRY.match(line)
        if entry:
            entries.append((entry.group(1), [line]))
        elif line.startswith("#") or not line.strip():
            continue
        elif entries and line[:1].isspace():
            entries[-1][1].append(line)
        else:
            raise HeaderError("header must be a YAML mapping (key: value lines)")
    fields: dict[str, Any] = {}
    for key, entry_lines in entries:
        if key in plain:
            written = " ".join(part.strip() for part in entry_lines)
            fields[key] = written.partition(":")[2].strip()
            continue
        try:
            value = yaml.load("\n".join(entry_lines), Loader=_LOADER)  # noqa: S506 - a safe loader
        except yaml.YAMLError as exc:
            raise HeaderError(f"header is not valid YAML: {exc}") from exc
        if not isinstance(value, dict):
            raise HeaderError("header must be a YAML mapping (key: value lines)")
        fields.update(value)
    return fields, "\n".join(lines[start:]).strip()
