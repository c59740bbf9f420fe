"""Nights in a row against the sandbox: a books file changed between nights resolves and
opens findings; acknowledgements survive a kill -9 and a resume, and one made while a run
runs is in the file that run publishes; an ack lapses when the amounts change."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from recon.findings.acks import AckLog, acks_path
from recon.findings.listing import list_findings
from recon.night import nightly as steps
from recon.sandbox.data import Dataset
from recon.sandbox.ledger import sandbox_books

from .conftest import KEY, TOKEN
from .test_ledger_nightly import overrides, sandbox

pytestmark = pytest.mark.integration

SEED, PAYMENTS = 13, 1500


def _states(db: Path, run_id: str) -> dict[str, str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return dict(
            con.execute(
                "SELECT finding_key, state FROM findings WHERE run_id = ? "
                "AND starts_with(check_name, 'ledger_')",
                [run_id],
            ).fetchall()
        )
    finally:
        con.close()


def _payment_amount(db: Path, reference: str) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute(
            "SELECT amount_minor FROM payments WHERE reference = ?", [reference]
        ).fetchone()
    finally:
        con.close()
    assert row is not None
    return int(row[0])


def _edit_orders(path: Path, changes: dict[str, int]) -> None:
    orders = pl.read_csv(path, infer_schema=False)
    for ref, amount in changes.items():
        orders = orders.with_columns(
            pl.when(pl.col("reference") == ref)
            .then(pl.lit(str(amount)))
            .otherwise(pl.col("amount_minor"))
            .alias("amount_minor")
        )
    orders.write_csv(path)


def test_a_books_file_changed_between_nights_resolves_and_opens(tmp_path: Path) -> None:
    books = sandbox_books(Dataset(SEED, PAYMENTS), tmp_path / "books")
    db = tmp_path / "data" / "recon.duckdb"
    with sandbox(seed=SEED, payments=PAYMENTS) as url:
        first = steps.run_local(overrides(tmp_path, url, books))
        night1 = _states(db, first.run_id)
        mismatches = sorted(k for k in night1 if k.startswith("ledger_amount_mismatch:"))
        fixed = mismatches[0].split(":")[1]
        matched = _matched_reference(db)
        broken_amount = _payment_amount(db, matched) + 7
        _edit_orders(
            Path(books["ledger_orders"]),
            {fixed: _payment_amount(db, fixed), matched: broken_amount},
        )
        second = steps.run_local(overrides(tmp_path, url, books))
    night2 = _states(db, second.run_id)
    assert night2[mismatches[0]] == "resolved"
    assert night2[f"ledger_amount_mismatch:{matched}:provider_short"] == "new"
    unchanged = set(night1) - {mismatches[0]}
    assert {night2[k] for k in unchanged} == {"open"}


def _matched_reference(db: Path) -> str:
    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute(
            "SELECT reference FROM ledger_matches WHERE kind = 'matched' ORDER BY reference LIMIT 1"
        ).fetchone()
    finally:
        con.close()
    assert row is not None
    return str(row[0])


RUNNER = """
import json, sys
from recon.night.nightly import run_local
summary = run_local(json.loads(sys.argv[1]), resume=sys.argv[2] or None)
print(summary.run_id, summary.status, flush=True)
"""


def _start(over: dict[str, Any], resume: str = "") -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON_")}
    env.update(RECON_API_KEY=KEY, RECON_BEARER_TOKEN=TOKEN, RECON_LANDING_BATCH_RECORDS="200")
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, json.dumps(over), resume],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _published_acks(db: Path) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT finding_key FROM finding_acknowledgements "
            "WHERE acknowledged AND run_id = (SELECT max(run_id) FROM runs)"
        ).fetchall()
    finally:
        con.close()
    return {r[0] for r in rows}


def test_acks_survive_kill_9_and_resume(tmp_path: Path) -> None:
    books = sandbox_books(Dataset(SEED, PAYMENTS), tmp_path / "books")
    db = tmp_path / "data" / "recon.duckdb"
    log = acks_path(db)
    with sandbox(seed=SEED, payments=PAYMENTS, latency_ms=20) as url:
        over = overrides(tmp_path, url, books)
        first = steps.run_local(over)
        keys = sorted(k for k in _states(db, first.run_id) if "ledger_" in k)
        open_before = list_findings(db, log, check="ledger_currency_mismatch")
        one, two = open_before[0], open_before[1]
        AckLog(log).append("ack", [(one.finding_key, one.amounts)], note="known: FX order")
        assert _published_acks(db) == {one.finding_key}  # in the published file at once

        proc = _start(over)
        landing = Path(over["landing"])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if len(list(landing.glob("*/payments/batch-*.parquet"))) >= 2:
                break
            time.sleep(0.01)
        # acknowledged while the second night runs, then the run dies
        AckLog(log).append("ack", [(two.finding_key, two.amounts)], note="ticket 4711")
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL

        resumed = _start(over, resume="latest")
        out, err = resumed.communicate(timeout=300)
        assert resumed.returncode == 0, err
        run_id = out.split()[0]
    assert run_id != first.run_id
    assert _published_acks(db) == {one.finding_key, two.finding_key}
    listed = {f.finding_key: f for f in list_findings(db, log)}
    assert listed[one.finding_key].work_state == "acknowledged"
    assert listed[two.finding_key].ack is not None
    assert listed[two.finding_key].ack.note == "ticket 4711"
    assert {k for k, f in listed.items() if f.acknowledged} == {one.finding_key, two.finding_key}
    assert set(keys) >= {one.finding_key, two.finding_key}


def test_an_ack_made_during_a_run_is_in_the_file_it_publishes(tmp_path: Path) -> None:
    books = sandbox_books(Dataset(SEED, PAYMENTS), tmp_path / "books")
    db = tmp_path / "data" / "recon.duckdb"
    log = acks_path(db)
    with sandbox(seed=SEED, payments=PAYMENTS) as url:
        over = overrides(tmp_path, url, books)
        steps.run_local(over)
        target = list_findings(db, log, check="ledger_amount_mismatch")[0]
        run_id = steps.start_step(over)
        steps.extract_step(over, run_id)
        steps.load_step(over, run_id, publish=False)  # the working copy is made here
        AckLog(log).append("ack", [(target.finding_key, target.amounts)], note="during")
        steps.check_step(over, run_id, publish=False, fresh=False)
        steps.publish_step(over, run_id)
    assert _published_acks(db) == {target.finding_key}


def test_an_ack_lapses_when_the_amounts_change_or_its_day_passes(tmp_path: Path) -> None:
    books = sandbox_books(Dataset(SEED, PAYMENTS), tmp_path / "books")
    db = tmp_path / "data" / "recon.duckdb"
    log = acks_path(db)
    with sandbox(seed=SEED, payments=PAYMENTS) as url:
        over = overrides(tmp_path, url, books)
        steps.run_local(over)
        mismatches = list_findings(db, log, check="ledger_amount_mismatch")
        changed, lapsing = mismatches[0], mismatches[1]
        AckLog(log).append("ack", [(changed.finding_key, changed.amounts)], note="a")
        today = datetime.now(UTC).date()
        AckLog(log).append("ack", [(lapsing.finding_key, lapsing.amounts)], note="b", until=today)
        assert {f.finding_key for f in list_findings(db, log, state="acknowledged")} == {
            changed.finding_key,
            lapsing.finding_key,
        }
        ref = changed.entity_id
        _edit_orders(Path(books["ledger_orders"]), {ref: _payment_amount(db, ref) + 999_999})
        steps.run_local(over)
    listed = {f.finding_key: f for f in list_findings(db, log)}
    assert listed[changed.finding_key].work_state == "open"  # its amounts changed
    assert listed[lapsing.finding_key].work_state == "acknowledged"
    after = datetime.now(UTC) + timedelta(days=2)  # its --until day has passed
    assert list_findings(db, log, state="acknowledged", now=after) == []
    reopened = {f.finding_key: f.work_state for f in list_findings(db, log, now=after)}
    assert reopened[lapsing.finding_key] == "open"
