"""Exit codes of `recon nightly` (docs/design.md): findings alone never change them without
--fail-on."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from recon.night.nightly import (
    EXIT_ABORTED,
    EXIT_COMPLETE,
    EXIT_FINDINGS,
    EXIT_INCOMPLETE,
    exit_code_for,
)


@pytest.mark.parametrize(
    ("status", "worst", "fail_on", "code"),
    [
        ("complete", None, None, EXIT_COMPLETE),
        ("complete", "error", None, EXIT_COMPLETE),  # findings alone: still 0
        ("incomplete", None, None, EXIT_INCOMPLETE),
        ("incomplete", "error", "info", EXIT_INCOMPLETE),  # incompleteness wins
        ("failed", None, None, EXIT_ABORTED),
        ("complete", "warn", "error", EXIT_COMPLETE),  # below the bar
        ("complete", "warn", "warn", EXIT_FINDINGS),
        ("complete", "error", "warn", EXIT_FINDINGS),
        ("complete", "info", "info", EXIT_FINDINGS),
    ],
)
def test_exit_code(status: str, worst: str | None, fail_on: str | None, code: int) -> None:
    assert exit_code_for(status, worst_failed=worst, fail_on=fail_on) == code


def test_the_codes_are_the_documented_numbers() -> None:
    assert (EXIT_COMPLETE, EXIT_ABORTED, EXIT_INCOMPLETE, EXIT_FINDINGS) == (0, 1, 3, 4)


def _closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow  # `recon nightly` in a new process
def test_an_unreachable_api_aborts_with_exit_1_and_one_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env.update(RECON_API_KEY="k", RECON_BEARER_TOKEN="t")
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("recon")),
            "nightly",
            "--base-url",
            url,
            "--db",
            str(tmp_path / "data" / "recon.duckdb"),
            "--landing",
            str(tmp_path / "landing"),
            "--reports",
            str(tmp_path / "reports"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == EXIT_ABORTED, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"recon: aborted: cannot reach the API at {url}/api/v1: ")
    assert "connection refused" in lines[0]
    # stopped before a run began: nothing landed, loaded or reported
    assert not list((tmp_path / "landing").glob("*/run.json"))
    assert not (tmp_path / "data" / "recon.duckdb").exists()
    assert not list((tmp_path / "reports").glob("*"))


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["nightly", "--retry-failed"], ["nightly", "--retry-failed", "latest"]),
        (["nightly", "--retry-failed", "-v"], ["nightly", "--retry-failed", "latest", "-v"]),
        (["nightly", "--retry-failed", "RUN"], ["nightly", "--retry-failed", "RUN"]),
        (["nightly", "--resume"], ["nightly", "--resume", "latest"]),
    ],
)
def test_retry_failed_and_resume_without_a_value_mean_the_newest(
    argv: list[str], expected: list[str]
) -> None:
    from recon.cli import _normalise_resume

    assert _normalise_resume(argv) == expected
