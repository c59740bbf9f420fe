"""The command line's boundary: usage errors exit 2 with one line naming the setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from recon.cli import _normalise_resume, app

runner = CliRunner()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def _commands() -> list[tuple[str, Any]]:
    """Every leaf command of the CLI (click objects), with its full name (`sandbox serve`)."""
    found: list[tuple[str, Any]] = []

    def walk(prefix: str, command: Any) -> None:
        if isinstance(command, typer.core.TyperGroup):
            for name, sub in command.commands.items():
                walk(f"{prefix} {name}".strip(), sub)
        else:
            found.append((prefix, command))

    walk("", typer.main.get_command(app))
    return found


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_cli_has_the_documented_commands() -> None:
    names = {name for name, _ in _commands()}
    assert {
        "nightly",
        "extract",
        "load",
        "check",
        "report",
        "export",
        "query",
        "schedule",
        "sandbox serve",
        "sandbox truth",
    } <= names


@pytest.mark.parametrize("name", [name for name, _ in _commands()])
def test_each_command_lists_itself_with_its_own_help_line(name: str) -> None:
    command = dict(_commands())[name]
    summary = (command.help or "").strip().splitlines()[0] if command.help else ""
    assert summary, f"`recon {name}` has no help text (its docstring)"
    *parents, leaf = name.split()
    listing = runner.invoke(app, [*parents, "--help"], terminal_width=200)
    assert listing.exit_code == 0
    # The group's listing shows this command's name followed by the start of its help line.
    line = next((ln for ln in listing.output.splitlines() if ln.strip().startswith(leaf)), "")
    assert _words(summary)[:30] in _words(line), (leaf, line)


@pytest.mark.parametrize("name", [name for name, _ in _commands()])
def test_every_option_of_a_command_has_help_shown_in_its_help(name: str) -> None:
    command = dict(_commands())[name]
    shown = runner.invoke(app, [*name.split(), "--help"], terminal_width=200)
    assert shown.exit_code == 0
    text = _words(shown.output)
    for param in command.params:
        if param.param_type_name != "option" or param.hidden:
            continue
        assert param.help, f"`recon {name}` option {param.opts[0]} has no help text"
        assert _words(param.help)[:25] in text, (name, param.opts[0])


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
