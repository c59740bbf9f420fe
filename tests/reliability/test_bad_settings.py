"""Bad settings and arguments: a one-line error naming the setting, exit 2, before any
request — proved with a live sandbox whose request counter stays at 0.

The settings/config validation itself is unit-tested in tests/config/test_settings.py,
tests/api/test_config.py and tests/api/test_operations.py
(`test_bad_arguments_fail_before_any_request`); tests/cli/test_cli.py checks the exit code.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.errors import ConfigError
from tests.api.sandbox_support import sandbox_client

from .conftest import KEY, TOKEN, sandbox, sandbox_state

pytestmark = pytest.mark.integration

runner = CliRunner()


@pytest.mark.parametrize(
    ("env", "args", "named"),
    [
        ({"RECON_PAGE_SIZE": "0"}, [], "RECON_PAGE_SIZE"),
        ({"RECON_PAGE_SIZE": "201"}, [], "RECON_PAGE_SIZE"),
        ({"RECON_PAGE_SIZE": "abc"}, [], "RECON_PAGE_SIZE"),
        ({"RECON_BASE_URL": "not a url"}, [], "RECON_BASE_URL"),
        ({"RECON_BASE_URL": "ftp://127.0.0.1:21"}, [], "RECON_BASE_URL"),
        ({"RECON_TIMEOUT_S": "-1"}, [], "RECON_TIMEOUT_S"),
        ({"RECON_MAX_ATTEMPTS": "0"}, [], "RECON_MAX_ATTEMPTS"),
        ({"RECON_CONCURRENCY": "0"}, [], "RECON_CONCURRENCY"),
        ({"RECON_CONCURRENCY": "lots"}, [], "RECON_CONCURRENCY"),
        ({"RECON_MAX_IN_FLIGHT": "0"}, [], "RECON_MAX_IN_FLIGHT"),
        ({"RECON_RATE_LIMIT": "-1"}, [], "RECON_RATE_LIMIT"),
        ({"RECON_RATE_LIMIT": "fast"}, [], "RECON_RATE_LIMIT"),
        ({"RECON_NARROW_MAX_REQUESTS": "-1"}, [], "RECON_NARROW_MAX_REQUESTS"),
        ({"RECON_LANDING_BATCH_RECORDS": "0"}, [], "RECON_LANDING_BATCH_RECORDS"),
        ({"RECON_DUCKDB_MEMORY_LIMIT": "lots"}, [], "RECON_DUCKDB_MEMORY_LIMIT"),
        ({"RECON_RETRY_AFTER_CAP_S": "-5"}, [], "RECON_RETRY_AFTER_CAP_S"),
        ({}, ["--db", "{blocker}/w.duckdb"], "RECON_DB"),
        ({}, ["--resume", "no-such-run"], "--resume"),
    ],
)
def test_bad_settings_exit_2_with_one_line_before_any_request(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    args: list[str],
    named: str,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with sandbox(seed=1, payments=200) as url:
        monkeypatch.setenv("RECON_BASE_URL", url)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        argv = ["nightly", *(a.format(blocker=blocker) for a in args)]
        result = runner.invoke(app, argv)
        served = sandbox_state(url)["requests"]
    line = result.output.strip()
    assert result.exit_code == 2, result.output
    assert named in line
    assert len(line.splitlines()) == 1, line
    assert "Traceback" not in line
    assert served == 0


Call = Callable[[Any], Any]


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda c: c.list_payments(max_records=0), "max_records"),
        (lambda c: c.list_payments(max_records=201), "max_records"),
        (lambda c: c.list_payments(skip=-1), "skip"),
        (lambda c: c.list_payments(status="bogus"), "status"),
        (lambda c: c.scan("payments", start_offset=-5), "start_offset"),
        (lambda c: c.scan("payments", status="lost"), "status"),
    ],
)
def test_bad_arguments_fail_before_any_request_at_the_sandbox(call: Call, named: str) -> None:
    with sandbox(seed=1, payments=200) as url:
        with (
            sandbox_client(url, [], api_key=KEY, bearer_token=TOKEN) as client,
            pytest.raises(ConfigError) as info,
        ):
            call(client)
        served = sandbox_state(url)["requests"]
    assert info.value.setting == named
    assert len(str(info.value).splitlines()) == 1
    assert served == 0
