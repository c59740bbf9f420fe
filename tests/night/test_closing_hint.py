"""The closing lines of a run print commands that work from wherever the user stands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from recon.night import nightly as steps

from .conftest import overrides_for, sandbox

pytestmark = pytest.mark.integration

RECON = Path(sys.executable).with_name("recon")


def _env(path: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["PATH"] = path
    return env


def _closing(cwd: Path, argv: list[str], path: str) -> dict[str, str]:
    """Run a recon command in `cwd`; its closing lines by label (`query it`, `report`, …)."""
    done = subprocess.run(
        argv, cwd=cwd, env=_env(path), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = {}
    for line in done.stdout.splitlines():
        label, sep, rest = line.partition(":")
        if sep and label in ("warehouse", "report", "summary", "query it"):
            lines[label] = rest.strip()
    return lines


@pytest.mark.parametrize("invoked", ["relative", "on-path"])
def test_the_printed_query_command_works_from_another_folder(tmp_path: Path, invoked: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with sandbox(seed=3, payments=300, faults="none") as url:
        summary = steps.run_local(overrides_for(project, url))
    assert summary.status == "complete"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bare_path = "/usr/bin:/bin"
    if invoked == "relative":  # `../project/.venv/bin/recon`-style: recon is not on PATH
        argv = [os.path.relpath(RECON, elsewhere)]
        path = bare_path
    else:
        argv = ["recon"]
        path = f"{RECON.parent}:{bare_path}"
    argv += ["report", "--db", "../project/data/recon.duckdb", "--reports", "../project/reports"]
    lines = _closing(elsewhere, argv, path)

    query = lines["query it"]
    if invoked == "on-path":
        assert query.startswith("recon query ")
    else:
        assert query.startswith(f"{RECON} query ")  # absolute: works from any folder
    for label in ("warehouse", "report", "summary"):
        assert Path(lines[label]).is_absolute(), lines
        assert Path(lines[label]).exists(), lines
    assert lines["warehouse"] == str((project / "data" / "recon.duckdb").resolve())

    third = tmp_path / "third"
    third.mkdir()
    ran = subprocess.run(
        query, shell=True, cwd=third, env=_env(path), capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert "extraction_completeness" in ran.stdout
    assert "passed" in ran.stdout
