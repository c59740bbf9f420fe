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


def test_the_readme_is_a_front_door_of_one_screen() -> None:
    """≤ 250 lines (issue 36): reference material lives in docs/, where its tests read it."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)


def test_the_readme_screenshot_is_committed_and_small() -> None:
    """`make screenshot` writes it; a PNG under 400 KB that the README shows."""
    png = REPO / "docs" / "report.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size < 400_000
    assert "](docs/report.png)" in (REPO / "README.md").read_text(encoding="utf-8")


def test_every_file_the_readme_links_exists() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    targets = {m.split("#", 1)[0] for m in re.findall(r"\]\(([^)\s]+)\)", text)}
    missing = sorted(t for t in targets if "://" not in t and not (REPO / t).exists())
    assert missing == []
