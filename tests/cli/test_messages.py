"""What a user is told when a setting or an argument is wrong: one line naming it as they
wrote it, exit 2, no traceback and no alert noise."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.warehouse.migrations import apply_migrations

runner = CliRunner()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    import duckdb

    path = tmp_path / "recon.duckdb"
    con = duckdb.connect(str(path))
    apply_migrations(con)
    con.execute(
        "INSERT INTO runs (run_id, started_at, status, loaded_at) "
        "VALUES ('r1', now(), 'complete', now())"
    )
    con.close()
    return path


def _one_line(result_stderr: str) -> str:
    lines = [x for x in result_stderr.splitlines() if x.strip()]
    assert len(lines) == 1, result_stderr
    return lines[0]


@pytest.mark.parametrize(
    "command", [["nightly", "--base-url", "http://127.0.0.1:9"], ["findings", "list"]]
)
def test_bad_json_in_recon_fields_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    db: Path,
    command: list[str],
) -> None:
    monkeypatch.setenv("RECON_FIELDS", "{bad json")
    monkeypatch.setenv("RECON_API_KEY", "k")
    with caplog.at_level(logging.WARNING):
        result = runner.invoke(app, [*command, "--db", str(db)])
    assert result.exit_code == 2, result.output
    line = _one_line(result.stderr)
    assert line.startswith("recon: bad setting RECON_FIELDS: is not valid JSON"), line
    assert "{bad json" not in line  # the value itself is never echoed (it may be a secret)
    assert "alert not sent" not in caplog.text  # RECON_NOTIFY_URL is not set: nothing to send


def test_a_bad_value_in_recon_toml_is_named_as_the_files_key(db: Path, tmp_path: Path) -> None:
    (tmp_path / "recon.toml").write_text('page_size = "x"\n')
    result = runner.invoke(app, ["findings", "list", "--db", str(db)])
    assert result.exit_code == 2
    assert _one_line(result.stderr).startswith("recon: bad setting recon.toml's page_size: ")


def test_the_same_bad_value_from_the_environment_is_named_as_the_variable(
    monkeypatch: pytest.MonkeyPatch, db: Path, tmp_path: Path
) -> None:
    (tmp_path / "recon.toml").write_text("page_size = 100\n")
    monkeypatch.setenv("RECON_PAGE_SIZE", "x")
    result = runner.invoke(app, ["findings", "list", "--db", str(db)])
    assert result.exit_code == 2
    assert _one_line(result.stderr).startswith("recon: bad setting RECON_PAGE_SIZE: ")


def test_an_unknown_finding_key_is_said_so(db: Path) -> None:
    result = runner.invoke(app, ["findings", "ack", "nope:x:y", "--note", "n", "--db", str(db)])
    assert result.exit_code == 2
    line = _one_line(result.stderr)
    assert line.startswith("recon: unknown finding key nope:x:y: ")
    assert "bad setting" not in line


def test_what_the_warehouse_refuses_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """A DuckDB file that is not a recon warehouse (no books in it): the warehouse's first
    line, never a traceback."""
    import duckdb

    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    result = runner.invoke(app, ["match", "ORD-1", "pay_1", "--note", "n", "--db", str(other)])
    assert result.exit_code == 1
    assert result.output.startswith("recon: aborted: the warehouse refused: Catalog Error: ")
    assert "ledger_orders" in result.output
    assert len(result.output.splitlines()) == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)

    result = runner.invoke(app, ["findings", "list", "--db", str(other)])  # its own guard
    assert result.exit_code == 1
    assert result.output.startswith("recon: aborted: the warehouse refused: Catalog Error: ")
    assert len(result.output.splitlines()) == 1
