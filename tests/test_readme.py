"""The README stays true: its SQL runs as written, its commands exist, its export examples work."""

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

from recon.cli import app

README = Path(__file__).resolve().parents[1] / "README.md"
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("sandbox_warehouse")]


@pytest.fixture
def warehouse(analyst_db: Path) -> Path:
    """The analysts' warehouse (tests/conftest.py): the README's queries and exports run on
    the same two sandbox nights, built once for both."""
    return analyst_db


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_shows_the_two_commands_first() -> None:
    text = README.read_text()
    assert text.index("make demo") < text.index("make test") < text.index("## Running it")


@pytest.mark.parametrize("sql", _blocks("sql"), ids=lambda s: s.splitlines()[0][:60])
def test_every_readme_query_runs_as_written(warehouse: Path, sql: str) -> None:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        rows = con.execute(sql).fetchall()
    finally:
        con.close()
    assert rows is not None


def test_every_recon_command_in_the_readme_exists() -> None:
    names = set(re.findall(r"(?:`|bin/)recon (\w+)", README.read_text()))
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
        for block in _blocks("sh")
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
