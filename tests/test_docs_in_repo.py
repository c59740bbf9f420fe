"""recon's code and docs cite files inside the repository only (docs/design.md: Layout)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_OUTSIDE = re.compile(r"\b(?:DESIGN|FACTS)(?:\.md)?\s*§|\b(?:DESIGN|FACTS)\.md\b|\.\./shared/")
_FILES = [
    *sorted(
        p
        for folder in ("src", "pipelines", "tests", "docs", "benchmarks", "sql")
        for p in (REPO / folder).rglob("*")
        if p.suffix in {".py", ".md", ".sql", ".toml", ".yaml"} and p != Path(__file__).resolve()
    ),
    REPO / "README.md",
    REPO / "pyproject.toml",
    REPO / "Makefile",
]


def test_cites_nothing_outside_the_repository() -> None:
    found = {
        str(p.relative_to(REPO)): m.group(0)
        for p in _FILES
        if (m := _OUTSIDE.search(p.read_text(encoding="utf-8")))
    }
    assert found == {}, "cite docs/design.md or docs/facts.md instead"


def test_the_cited_docs_exist() -> None:
    for name in ("design.md", "facts.md", "architecture.md"):
        assert (REPO / "docs" / name).is_file(), name
