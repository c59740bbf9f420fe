"""`recon nightly --sandbox` (what `make demo` runs) writes the sandbox's statements beside
the warehouse and reconciles them: the report's Cash section shows the planted cases found,
and the bank findings are exactly the plants — nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.xdist_group("prefect")]


def test_the_demo_reconciles_the_sandboxs_statements(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECON_", "PREFECT_API"))}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    proc = subprocess.run(
        [sys.executable, "-m", "recon", "nightly", "--sandbox", "--sandbox-payments", "2000"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode in (0, 3), proc.stderr[-3000:]
    truth = json.loads((tmp_path / "data" / "sandbox-bank" / "truth.json").read_text())
    con = duckdb.connect(str(tmp_path / "data" / "recon.duckdb"), read_only=True)
    found = con.execute(
        "SELECT check_name, entity_id FROM findings WHERE starts_with(check_name, 'bank_')"
    ).fetchall()
    con.close()
    expected = {(k, e) for k, ids in truth.items() if k.startswith("bank_") for e in ids}
    assert set(found) == expected
    report = (tmp_path / "reports" / "latest" / "report.md").read_text()
    cash = report.split("## Cash", 1)[1].split("\n## ", 1)[0]
    assert [line.split("|")[1].strip() for line in cash.splitlines() if line.startswith("| ")][
        1:
    ] == ["BHD", "EUR", "GBP", "JPY", "USD"]
    assert 'id="cash"' in (tmp_path / "reports" / "latest" / "report.html").read_text()
