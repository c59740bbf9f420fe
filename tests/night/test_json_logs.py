"""A night's log lines with RECON_LOG_FORMAT=json: each resource's extraction thread logs
with the run id, the step and its resource; the load step with its own step name."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from recon import logs
from recon.night import nightly as steps
from recon.night.progress import LogProgress

from .conftest import KEY, overrides_for, sandbox


@pytest.fixture
def json_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "night.log"
    monkeypatch.setenv("RECON_LOG_FORMAT", "json")
    monkeypatch.setenv("RECON_LOG_FILE", str(path))
    logs.configure()
    yield path
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "_recon", False)]:
        root.removeHandler(handler)
        handler.close()


@pytest.mark.integration
def test_a_nights_json_lines_name_run_step_and_resource(json_log: Path, tmp_path: Path) -> None:
    with sandbox(seed=4, payments=60) as url:
        summary = steps.run_local(overrides_for(tmp_path, url), progress=LogProgress(every_s=0))
    lines = [json.loads(line) for line in json_log.read_text().splitlines()]
    done = [x for x in lines if str(x["message"]).endswith(": complete")]
    assert {x["resource"] for x in done} >= {"payments", "refunds", "disputes"}
    for line in done:
        assert (line["run_id"], line["step"]) == (summary.run_id, "extract")
        assert str(line["message"]).startswith(f"{line['resource']}: ")
    assert KEY not in json_log.read_text()
