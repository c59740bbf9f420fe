"""The command line's boundary: usage errors exit 2 with one line naming the setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recon.cli import _normalise_resume, app

runner = CliRunner()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def test_every_command_has_help() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in (
        "nightly",
        "extract",
        "load",
        "check",
        "report",
        "export",
        "query",
        "schedule",
        "sandbox",
    ):
        assert command in result.output
        sub = runner.invoke(app, [command, "--help"])
        assert sub.exit_code == 0, command
        assert len(sub.output.strip().splitlines()) > 2, command


@pytest.mark.parametrize(
    ("env", "value", "named"),
    [
        ("RECON_PAGE_SIZE", "0", "RECON_PAGE_SIZE"),
        ("RECON_PAGE_SIZE", "201", "RECON_PAGE_SIZE"),
        ("RECON_BASE_URL", "nonsense", "RECON_BASE_URL"),
    ],
)
def test_nightly_with_a_bad_setting_exits_2_before_any_request(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str, named: str
) -> None:
    monkeypatch.setenv(env, value)
    result = runner.invoke(app, ["nightly"])
    assert result.exit_code == 2
    line = result.output.strip()
    assert named in line
    assert len(line.splitlines()) == 1


def test_nightly_without_a_base_url_says_which_setting(tmp_path: Path) -> None:
    # Run as a real process: it must stop before Prefect starts or any request is made.
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    proc = subprocess.run(
        [sys.executable, "-m", "recon", "nightly", "--db", str(tmp_path / "w.duckdb")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert "RECON_BASE_URL" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_an_unwritable_db_path_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = runner.invoke(
        app,
        ["nightly", "--base-url", "http://127.0.0.1:9", "--db", str(blocker / "w.duckdb")],
        env={"RECON_API_KEY": "k"},
    )
    assert result.exit_code == 2
    assert "RECON_DB" in result.output


def test_bare_resume_means_the_newest_run() -> None:
    assert _normalise_resume(["nightly", "--resume"]) == ["nightly", "--resume", "latest"]
    assert _normalise_resume(["nightly", "--resume", "--sandbox"]) == [
        "nightly",
        "--resume",
        "latest",
        "--sandbox",
    ]
    assert _normalise_resume(["nightly", "--resume", "20261121T020000Z-abcdef"])[-1] == (
        "20261121T020000Z-abcdef"
    )


def test_query_refuses_to_read_files(tmp_path: Path) -> None:
    import duckdb

    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).execute("CREATE TABLE t AS SELECT 1 AS x").close()
    ok = runner.invoke(app, ["query", "SELECT x FROM t", "--db", str(db)])
    assert ok.exit_code == 0
    assert "1" in ok.output
    bad = runner.invoke(app, ["query", "SELECT * FROM read_text('/etc/passwd')", "--db", str(db)])
    assert bad.exit_code == 2
    assert "root:" not in bad.output
