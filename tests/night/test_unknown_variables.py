"""A night started without the command (a Prefect worker runs the flow) still names an
unknown RECON_* variable, once, in its log."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from recon.night import nightly as steps

from .conftest import overrides_for


def test_the_start_step_warns_once_about_an_unknown_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("recon.config.environment._REPORTED", set())
    monkeypatch.setenv("RECON_MAX_ATTEMTPS", "3")
    over = overrides_for(tmp_path, "http://127.0.0.1:9")
    with caplog.at_level(logging.WARNING, logger="recon"):
        steps.start_step(over, probe_api=False)
        steps.start_step(over, probe_api=False)
    warned = [r.getMessage() for r in caplog.records if "RECON_MAX_ATTEMTPS" in r.getMessage()]
    assert warned == [
        "RECON_MAX_ATTEMTPS is not a recon setting (ignored); did you mean RECON_MAX_ATTEMPTS?"
    ]
