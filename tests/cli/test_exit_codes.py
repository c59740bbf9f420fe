"""Exit codes of `recon nightly` (DESIGN §3): findings alone never change them without --fail-on."""

from __future__ import annotations

import pytest

from recon.nightly import (
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
