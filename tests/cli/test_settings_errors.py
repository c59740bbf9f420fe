"""Settings that fail in one line (issue 37): a malformed recon.toml, unknown RECON_*
variables, a bad webhook URL, a missing warehouse — in every command, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recon.cli import app

BROKEN = 'page_size = 100\nbase_url = "https://payments.example.com\n'

# every command that reads the settings, with arguments that would otherwise get it going
COMMANDS = [
    ["nightly"],
    ["extract"],
    ["check"],
    ["report"],
    ["query", "SELECT 1"],
    ["export", "payments"],
    ["describe"],
    ["findings", "list"],
    ["findings", "verify"],
    ["close", "2026-10"],
    ["match", "O-1", "pay_1"],
    ["schedule"],
]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("recon.config.environment._REPORTED", set())  # warned once a process


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_a_malformed_recon_toml_is_one_line_naming_the_file_and_line_exit_2(
    tmp_path: Path, args: list[str]
) -> None:
    (tmp_path / "recon.toml").write_text(BROKEN)
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)
    lines = done.stderr.strip().splitlines()
    assert lines[-1] == (
        f"recon: bad setting {tmp_path / 'recon.toml'}, line 2: is not valid TOML: "
        "illegal character '\\n' (column 41)"
    )
    assert "Traceback" not in done.output


def test_recon_config_names_the_file_it_points_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "etc" / "recon-eu.toml"
    elsewhere.parent.mkdir()
    elsewhere.write_text("[accounts.eu]\nbase_url = 'https://eu.example.com'\n[accounts.eu]\n")
    monkeypatch.setenv("RECON_CONFIG", str(elsewhere))
    done = CliRunner().invoke(app, ["query", "SELECT 1"])
    assert done.exit_code == 2
    assert done.stderr.strip().startswith(f"recon: bad setting {elsewhere}, line 3: ")


def test_a_webhook_url_that_is_no_url_stops_the_night_before_any_request(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("RECON_NOTIFY_URL", "not-a-url")
    monkeypatch.setenv("RECON_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("RECON_API_KEY", "k")
    done = CliRunner().invoke(app, ["nightly"])
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "recon: bad setting RECON_NOTIFY_URL: must be an http(s) URL with a host"
    )
    assert "attempt" not in caplog.text  # no alert tried at what is not a URL
    assert "alert not sent" not in caplog.text


def test_an_unknown_recon_variable_is_named_with_the_closest_known_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_PAGESIZE", "500")
    done = CliRunner().invoke(app, ["query", "SELECT 1", "--db", str(tmp_path / "none.duckdb")])
    assert (
        "recon: warning: RECON_PAGESIZE is not a recon setting (ignored); "
        "did you mean RECON_PAGE_SIZE?"
    ) in done.stderr.splitlines()


def test_variables_recon_reads_that_are_not_settings_are_not_warned_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.config.environment import unknown_variables

    (tmp_path / "recon.toml").write_text(
        '[accounts.eu]\nbase_url = "https://eu.example.com"\napi_key_env = "RECON_EUROPE_KEY"\n'
    )
    env = {
        "RECON_PAGE_SIZE": "100",
        "RECON_SANDBOX_API_KEY": "k",
        "RECON_SANDBOX_EU_API_KEY": "k",
        "RECON_RELIABILITY_LOAD": "1",
        "RECON_CONFIG": "recon.toml",
        "RECON_EU_API_KEY": "k",
        "RECON_EUROPE_KEY": "k",  # named by recon.toml
        "PATH": "/bin",
        "RECON_WHATEVER": "1",
        "recon_timeout": "3",
    }
    assert unknown_variables(env) == [
        ("RECON_WHATEVER", None),
        ("recon_timeout", "RECON_TIMEOUT_S"),
    ]


@pytest.mark.parametrize(
    "args",
    [["query", "SELECT 1"], ["findings", "list"], ["close", "2026-10"], ["report"]],
    ids=lambda a: " ".join(a),
)
def test_no_warehouse_says_where_it_looked_and_how_to_point_it(
    tmp_path: Path, args: list[str]
) -> None:
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 1
    line = done.stderr.strip()
    assert f"no warehouse at {tmp_path / 'data' / 'recon.duckdb'} (the default, " in line
    assert "--db PATH, RECON_DB or db = " in line
    assert len(done.stderr.strip().splitlines()) == 1


def test_no_warehouse_names_the_setting_that_chose_the_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_DB", str(tmp_path / "elsewhere.duckdb"))
    done = CliRunner().invoke(app, ["query", "SELECT 1"])
    assert f"no warehouse at {tmp_path / 'elsewhere.duckdb'} (RECON_DB);" in done.stderr
    monkeypatch.delenv("RECON_DB")
    (tmp_path / "recon.toml").write_text('db = "books/w.duckdb"\n')
    done = CliRunner().invoke(app, ["findings", "list"])
    assert f"(db in {tmp_path / 'recon.toml'});" in done.stderr
    done = CliRunner().invoke(app, ["query", "SELECT 1", "--db", "x.duckdb"])
    assert f"no warehouse at {tmp_path / 'x.duckdb'} (--db);" in done.stderr
