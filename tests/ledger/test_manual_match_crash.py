"""A person's match survives a night killed with SIGKILL, and the night after honours it.

The match is a line of the fsync'd, hash-chained audit trail beside the warehouse, not a row
of the warehouse a run replaces: a night killed mid-way (after it copied the warehouse, before
it published) loses nothing of it, and the next night links the order as rule `manual`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.findings.acks import acks_path
from recon.findings.verify import verify_trail
from recon.night import nightly as steps
from recon.sandbox.data import Dataset
from recon.sandbox.ledger import make_books, write_books

from .conftest import KEY, TOKEN
from .test_ledger_nightly import findings, overrides, sandbox

pytestmark = [pytest.mark.integration, pytest.mark.slow]

RUNNER = """
import json, sys
from recon.night.nightly import run_local
run_local(json.loads(sys.argv[1]))
"""


def _rows(db: Path, sql: str, params: list[object]) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def test_a_manual_match_survives_a_killed_night_and_holds_the_night_after(
    tmp_path: Path,
) -> None:
    seed, payments = 13, 1200
    data = make_books(Dataset(seed, payments))
    paths = write_books(data, tmp_path / "books", ("csv",))
    books = {f"ledger_{k}": str(v[0]) for k, v in paths.items()}
    case = next(c for c in data.cases if c["case"] == "no_reference")
    order, (payment,) = case["order"], case["payments"]
    with sandbox(seed=seed, payments=payments) as url:
        over = overrides(tmp_path, url, books)
        db = Path(over["db"])
        first = steps.run_local(over)
        assert first.status == "complete"
        assert ("ledger_suggested_match", "order", order, "suggested") in findings(db, first.run_id)
        key = f"ledger_suggested_match:{order}:suggested"
        result = CliRunner().invoke(app, ["match", key, "--note", "paid by phone", "--db", str(db)])
        assert result.exit_code == 0, result.output
        trail_before = acks_path(db).read_bytes()

        # a night killed once its working copy exists (mid-way, nothing published)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
        env.update(RECON_API_KEY=KEY, RECON_BEARER_TOKEN=TOKEN, RECON_CONCURRENCY="1")
        proc = subprocess.Popen(
            [sys.executable, "-c", RUNNER, json.dumps(over)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        landing = Path(over["landing"])
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if len(list(landing.glob("*/*/batch-*.parquet"))) > len(
                list(landing.glob(f"{first.run_id}/*/batch-*.parquet"))
            ):
                break
            time.sleep(0.005)
        assert proc.poll() is None, "the night ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)

        assert acks_path(db).read_bytes() == trail_before  # the trail is untouched
        assert verify_trail(acks_path(db)).intact
        after = steps.run_local(over)  # the next night, a fresh run
    assert after.status == "complete"
    assert _rows(db, "SELECT payment_id, rule FROM ledger_links WHERE order_key = ?", [order]) == [
        (payment, "manual")
    ]
    left = findings(db, after.run_id)
    assert not {f for f in left if f[2] in (order, payment)}
