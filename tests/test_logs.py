"""Log lines (issue 37.5): RECON_LOG_FORMAT=json is one object a line with the night's
run_id, account, step and resource; RECON_LOG_FILE gets the same lines; no secret in either;
progress bars only on a terminal with text logs."""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recon import logs
from recon.cli import app
from recon.cli.common import bars_wanted

SECRET = "sk_live_never_in_a_log_9f2"
FIELDS = ["time", "level", "logger", "run_id", "account", "step", "resource", "message"]


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    root = logging.getLogger()
    level = root.level
    yield
    for handler in [h for h in root.handlers if getattr(h, "_recon", False)]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_json_lines_carry_the_context_and_never_a_secret(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RECON_API_KEY", SECRET)
    monkeypatch.setenv("RECON_LOG_FORMAT", "json")
    monkeypatch.setenv("RECON_LOG_FILE", str(tmp_path / "logs" / "night.log"))
    logs.configure()
    log = logging.getLogger("recon.test")

    @logs.step("extract")
    def extract(overrides: dict[str, str], run_id: str) -> None:
        with logs.context(resource="payments"):
            log.info("page 3 of payments, key %s", SECRET)
        try:
            raise ValueError(f"boom with {SECRET}\nsecond line")
        except ValueError:
            log.exception("failed")

    extract({"account": "eu"}, "20261129T020000Z-abcdef")
    log.warning("outside a night")
    first, second, third = _lines(tmp_path / "logs" / "night.log")
    assert list(first) == FIELDS
    assert first["level"] == "INFO"
    assert (first["run_id"], first["account"], first["step"], first["resource"]) == (
        "20261129T020000Z-abcdef",
        "eu",
        "extract",
        "payments",
    )
    assert first["message"] == "page 3 of payments, key ***"
    assert str(first["time"]).endswith("+00:00")
    assert second["resource"] is None  # the resource's block ended
    assert second["error"] == "ValueError: boom with ***"  # one line, no traceback
    assert (third["run_id"], third["step"]) == (None, None)
    assert SECRET not in (tmp_path / "logs" / "night.log").read_text()


def test_text_is_the_default_and_scrubbed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RECON_API_KEY", SECRET)
    monkeypatch.setenv("RECON_LOG_FILE", str(tmp_path / "night.log"))
    assert logs.configure().format == "text"
    logging.getLogger("recon.test").info("key %s", SECRET)
    (line,) = (tmp_path / "night.log").read_text().splitlines()
    assert line.endswith(" INFO recon.test: key ***")


def test_a_bad_log_setting_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_LOG_FORMAT", "xml")
    done = CliRunner().invoke(app, ["nightly"])
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "recon: bad setting RECON_LOG_FORMAT: Input should be 'text' or 'json'"
    )


def test_a_commands_error_is_a_json_line_with_json_logs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RECON_LOG_FORMAT", "json")
    done = CliRunner().invoke(app, ["query", "SELECT 1"])
    assert done.exit_code == 1
    (line,) = [json.loads(x) for x in done.stderr.splitlines()]
    assert line["level"] == "ERROR"
    assert str(line["message"]).startswith("aborted: no warehouse at ")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bars_only_on_a_terminal_with_text_logs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert not bars_wanted()
    monkeypatch.setattr("sys.stderr", _Tty())
    assert bars_wanted()
    assert not bars_wanted(enabled=False)
    monkeypatch.setenv("RECON_LOG_FORMAT", "json")
    assert not bars_wanted()


def test_prefects_logging_setup_keeps_recons_handlers(monkeypatch: pytest.MonkeyPatch) -> None:
    # Prefect replaces the root logger's handlers unless one looks like the user's own; a
    # JSON night then printed Prefect's lines in Prefect's format and lost recon's own.
    from prefect.logging.configuration import setup_logging

    monkeypatch.setenv("RECON_LOG_FORMAT", "json")
    # From a root logger with no handlers: an earlier test in this process may have set
    # Prefect's logging up already (its console handler would then be there before recon's).
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    logs.configure()
    setup_logging(incremental=False)
    handlers = logging.getLogger().handlers
    assert any(isinstance(h, logs.StderrHandler) for h in handlers)
    assert not any(type(h).__name__ == "PrefectConsoleHandler" for h in handlers)


def test_a_log_file_that_cannot_be_written_is_one_line_exit_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env["RECON_LOG_FILE"] = str(blocker / "night.log")
    done = subprocess.run(
        [str(Path(sys.executable).with_name("recon")), "nightly"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"recon: bad setting RECON_LOG_FILE: cannot write {blocker}/night.log: ")
