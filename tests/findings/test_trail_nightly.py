"""A night and the audit trail (issue 39): its report writes the trail's head down, and a
night refuses to copy a trail that disagrees with the warehouse's record of it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.findings.acks import acks_path, line_hash
from recon.findings.verify import TrailDisagrees
from recon.night import nightly as steps
from recon.sandbox.app import SandboxConfig
from recon.sandbox.server import serve_in_thread

pytestmark = pytest.mark.integration

KEY, TOKEN = "trail-test-key", "trail-test-token"


def test_a_night_writes_the_head_down_and_refuses_a_forged_trail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_API_KEY", KEY)
    monkeypatch.setenv("RECON_BEARER_TOKEN", TOKEN)
    db = tmp_path / "data" / "recon.duckdb"
    overrides = {
        "db": str(db),
        "landing": str(tmp_path / "data" / "landing"),
        "reports": str(tmp_path / "reports"),
    }
    cfg = SandboxConfig(api_key=KEY, bearer_token=TOKEN, retry_after_s=0, slow_s=0.0,
                        seed=3, payments=300)  # fmt: skip
    with serve_in_thread(cfg) as url:
        first = steps.run_local({**overrides, "base_url": url})
        listed = CliRunner().invoke(app, ["findings", "list", "--db", str(db)]).stdout
        key = listed.splitlines()[1].split()[1]  # under the header
        acked = CliRunner().invoke(app, ["findings", "ack", key, "--note", "NOTE-A1",
                                         "--db", str(db)])  # fmt: skip
        assert acked.exit_code == 0, acked.output
        second = steps.run_local({**overrides, "base_url": url})
        summary = orjson.loads((tmp_path / "reports" / second.run_id / "summary.json").read_bytes())
        lines = acks_path(db).read_bytes().splitlines()
        assert summary["audit_trail"] == {"lines": 1, "head": line_hash(lines[0])}
        assert first.run_id != second.run_id
        acks_path(db).write_bytes(acks_path(db).read_bytes().replace(b"NOTE-A1", b"NOTE-B2"))
        with pytest.raises(TrailDisagrees) as refused:
            steps.run_local({**overrides, "base_url": url})
    message = str(refused.value)
    assert "\n" not in message
    assert "line 1 differs from the copy the warehouse took (edited)" in message
    assert "run `recon findings verify`" in message
    verify = CliRunner().invoke(app, ["findings", "verify", "--db", str(db), "--reports",
                                      str(tmp_path / "reports")])  # fmt: skip
    assert verify.exit_code == 1
