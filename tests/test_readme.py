"""The README and the docs its sections moved to stay true: their SQL runs as written, their
commands exist, their export examples work, the README's example check is a check."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from recon.checks import parse_check_text
from recon.cli import app

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
# The README's former sections, moved to docs/ (issue 36): the same tests read them there.
WAREHOUSE_DOC = REPO / "docs" / "warehouse.md"
MOVED = [
    REPO / "docs" / name
    for name in (
        "settings.md",
        "operations.md",
        "night.md",
        "books.md",
        "accounts.md",
        "warehouse.md",
        "closing.md",
        "performance-history.md",
    )
]
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("sandbox_warehouse")]


@pytest.fixture
def warehouse(analyst_db: Path) -> Path:
    """The analysts' warehouse (tests/conftest.py): the README's queries and exports run on
    the same two sandbox nights, built once for both."""
    return analyst_db


def _blocks(lang: str, *docs: Path) -> list[str]:
    return [
        block
        for doc in docs
        for block in re.findall(rf"```{lang}\n(.*?)```", doc.read_text(), flags=re.S)
    ]


def test_readme_shows_the_two_commands_first() -> None:
    text = README.read_text()
    assert text.index("make demo") < text.index("make test") < text.index("## Running it")


@pytest.mark.parametrize("sql", _blocks("sql", WAREHOUSE_DOC), ids=lambda s: s.splitlines()[0][:60])
def test_every_readme_query_runs_as_written(warehouse: Path, sql: str) -> None:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        rows = con.execute(sql).fetchall()
    finally:
        con.close()
    assert rows is not None


def test_every_recon_command_in_the_readme_exists() -> None:
    text = "".join(doc.read_text() for doc in (README, *MOVED))
    names = set(re.findall(r"(?:`|bin/)recon (\w+)", text))
    result = CliRunner().invoke(app, ["--help"])
    for name in names:
        if name in ("serve", "truth"):
            continue
        assert name in result.output, f"README mentions `recon {name}`, which does not exist"


def test_readme_export_examples_work(warehouse: Path, tmp_path: Path) -> None:
    """Each export line runs through a real shell (bash), as a reader would paste it."""
    recon = Path(sys.executable).parent / "recon"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["RECON_DB"] = str(warehouse)
    lines = [
        line.strip()
        for block in _blocks("sh", README, *MOVED)
        for line in block.splitlines()
        if line.strip().startswith(".venv/bin/recon export")
    ]
    assert lines
    for line in lines:
        command = line.replace(".venv/bin/recon", shlex.quote(str(recon)), 1)
        done = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, (line, done.stderr)
        assert "wrote" in done.stdout


def test_the_readme_example_check_is_a_check_that_runs(warehouse: Path) -> None:
    """`## Extending it` shows a check file: it parses as one and its SELECT runs."""
    section = README.read_text().split("## Extending it", 1)[1]
    block = re.findall(r"```sql\n(.*?)```", section, flags=re.S)[0]
    text = "\n".join(line.removeprefix("  ") for line in block.splitlines())
    check = parse_check_text(text, name="refund_without_reason")
    assert (check.severity, check.requires) == ("warn", ("refunds",))
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute(check.sql).fetchall() is not None
    finally:
        con.close()
