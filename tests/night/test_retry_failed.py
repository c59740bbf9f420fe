"""`recon nightly --retry-failed`: finish an incomplete night once the provider is fixed.

A poisoned dispute (every page that holds it answers 500) makes the night incomplete; once
the fault is switched off, retry-failed fetches only the failed pages and the run ends
`complete` with the same warehouse as a night that never failed, also when killed midway.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.errors import ConfigError
from recon.night import nightly as steps

from .conftest import KEY, night_env, overrides_for, sandbox
from .test_resume import _content, _env, _kill, _wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SEED, PAYMENTS, POISON = 21, 3000, "disputes:40"

RETRY = """
import json, sys
from recon.night.nightly import retry_local
summary = retry_local(json.loads(sys.argv[1]))
print(summary.run_id, summary.status, flush=True)
"""


def _poison(url: str, on: bool) -> None:
    body = {"poison": [POISON] if on else []}
    answer = httpx.post(f"{url}/_sandbox/faults", json=body, headers={"x-api-key": KEY}, timeout=30)
    answer.raise_for_status()


def _failed_pages(db: str, run_id: str) -> list[tuple[str, int]]:
    con = duckdb.connect(db, read_only=True)
    try:
        rows = con.execute(
            "SELECT resource, failed_pages FROM resource_scans WHERE run_id = ? "
            "AND failed_pages > 0",
            [run_id],
        ).fetchall()
        return [(str(r), int(n)) for r, n in rows]
    finally:
        con.close()


def _list_calls(db: str, run_id: str) -> dict[str, int]:
    con = duckdb.connect(db, read_only=True)
    try:
        return dict(
            con.execute(
                "SELECT resource, count(*) FROM api_calls WHERE run_id = ? GROUP BY resource",
                [run_id],
            ).fetchall()
        )
    finally:
        con.close()


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The warehouse of nights that never failed, after the first and after the second:
    what every retry below must end with. Made once for the module (per test process), not
    once per test: the same sandbox data, so the same content."""
    folder = tmp_path_factory.mktemp("clean")
    contents = []
    with night_env(folder), sandbox(seed=SEED, payments=PAYMENTS) as url:
        ref = overrides_for(folder, url)
        for _ in range(2):
            assert steps.run_local(ref).status == "complete"
            contents.append(_content(Path(ref["db"])))
    return contents


@pytest.mark.parametrize("nights_before", [0, 1])
def test_retry_failed_completes_the_night_as_if_it_never_failed(
    tmp_path: Path, nights_before: int, clean: list[dict[str, Any]]
) -> None:
    with sandbox(seed=SEED, payments=PAYMENTS) as url:
        over = overrides_for(tmp_path / "night", url)
        for _ in range(nights_before):  # findings open from an earlier night are carried
            assert steps.run_local(over).status == "complete"
        _poison(url, on=True)
        night = steps.run_local(over)
        assert (night.status, night.exit_code) == ("incomplete", steps.EXIT_INCOMPLETE)
        assert _failed_pages(over["db"], night.run_id) == [("disputes", 1)]
        calls_before = _list_calls(over["db"], night.run_id)

        still = steps.retry_local(over)  # the provider is not fixed yet: still incomplete
        assert (still.run_id, still.status) == (night.run_id, "incomplete")
        assert _failed_pages(over["db"], night.run_id) == [("disputes", 1)]

        _poison(url, on=False)
        done = steps.retry_local(over)
    assert (done.run_id, done.status, done.exit_code) == (night.run_id, "complete", 0)
    assert _content(Path(over["db"])) == clean[nights_before]
    assert any(line.startswith("  FAILED (fetched again later) GET ") for line in done.lines)

    # only the failed window was asked for again (once per retry: two retries)
    calls_after = _list_calls(over["db"], night.run_id)
    added = {
        r: n - calls_before.get(r, 0) for r, n in calls_after.items() if n != calls_before.get(r)
    }
    assert list(added) == ["disputes"]
    assert added["disputes"] >= 2  # the failed window, once per retry (plus its attempts)

    con = duckdb.connect(over["db"], read_only=True)
    reason = con.execute("SELECT reason FROM runs WHERE run_id = ?", [night.run_id]).fetchone()
    retries = con.execute(
        "SELECT retry_id, pages_fetched, still_failing, request_ids FROM run_retries "
        "WHERE run_id = ? ORDER BY started_at, retry_id",
        [night.run_id],
    ).fetchall()
    con.close()
    assert [(p, s) for _r, p, s, _ids in retries] == [(0, 1), (1, 0)]
    if nights_before:  # findings carried from the earlier night are there, as in a clean one
        assert "open" in {s for *_, s in clean[nights_before]["findings"]}
    last_id, _p, _s, request_ids = retries[-1]
    assert request_ids
    assert all(rid.startswith("req_") for rid in request_ids)
    assert reason is not None
    assert f"completed later by retry {last_id}" in reason[0]
    assert request_ids[0] in reason[0]
    report = (Path(over["reports"]) / night.run_id / "report.html").read_text()
    assert f"completed later by retry {last_id}" in report
    assert request_ids[0] in report


def test_retry_failed_survives_kill_9(tmp_path: Path, clean: list[dict[str, Any]]) -> None:
    with sandbox(seed=SEED, payments=PAYMENTS) as url:
        over = overrides_for(tmp_path / "night", url)
        _poison(url, on=True)
        assert steps.run_local(over).status == "incomplete"
        _poison(url, on=False)
        work = Path(over["db"]).with_name(".recon.duckdb.work")
        proc = subprocess.Popen(
            [sys.executable, "-c", RETRY, json.dumps(over)],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        reached = _wait_for(work.exists, proc)
        stderr = _kill(proc)
        if not reached:
            pytest.fail(f"the retry ended before its load: {stderr}")
        done = steps.retry_local(over)
    assert done.status == "complete"
    assert _content(Path(over["db"])) == clean[0]


def test_retry_failed_is_refused_over_a_newer_run_and_for_a_complete_one(
    tmp_path: Path,
) -> None:
    with sandbox(seed=SEED, payments=PAYMENTS) as url:
        over = overrides_for(tmp_path / "night", url)
        _poison(url, on=True)
        old = steps.run_local(over)
        _poison(url, on=False)
        new = steps.run_local(over)
        assert (old.status, new.status) == ("incomplete", "complete")
        with pytest.raises(ConfigError, match=f"run {new.run_id} was published after"):
            steps.retry_local(over, old.run_id)
        with pytest.raises(ConfigError, match=f"run {new.run_id} was published after"):
            steps.retry_local(over)  # the newest incomplete run is that old one
        with pytest.raises(ConfigError, match="is complete: nothing to retry"):
            steps.retry_local(over, new.run_id)
        cli = CliRunner().invoke(
            app, ["nightly", "--retry-failed", "latest", *_flags(over)], catch_exceptions=False
        )
    assert cli.exit_code == 2
    assert cli.output.strip().splitlines() == [
        f"recon: bad setting --retry-failed: run {new.run_id} was published after "
        f"{old.run_id} over the same data: finishing {old.run_id} now would put older "
        "records over newer ones; run the night again (recon nightly) instead"
    ]


def _flags(over: dict[str, str]) -> list[str]:
    return [f"--{k.replace('_', '-')}={v}" for k, v in over.items()]


@pytest.mark.parametrize("killed_after_setting_aside", [False, True])
def test_a_list_not_offered_that_answers_now_is_paged_whole(
    tmp_path: Path, killed_after_setting_aside: bool, clean: list[dict[str, Any]]
) -> None:
    over = overrides_for(tmp_path / "night", "")
    with sandbox(seed=SEED, payments=PAYMENTS, invoices_list=False) as url:
        night = steps.run_local({**over, "base_url": url})
    assert night.status == "incomplete"
    assert "invoices unavailable" in (night.reason or "")
    with sandbox(seed=SEED, payments=PAYMENTS, invoices_list=False) as url:
        still = steps.retry_local({**over, "base_url": url})  # still not offered: unchanged
        assert (still.status, still.reason) == ("incomplete", night.reason)
    if killed_after_setting_aside:  # a retry killed between its two steps (see refetch)
        run = Path(over["landing"]) / night.run_id
        (run / "retired").mkdir(exist_ok=True)
        (run / "invoices").rename(run / "retired" / "invoices-20261123T000000Z-000000")
    with sandbox(seed=SEED, payments=PAYMENTS) as url:  # the provider offers it now
        done = steps.retry_local({**over, "base_url": url})
    assert (done.run_id, done.status) == (night.run_id, "complete")
    assert _content(Path(over["db"])) == clean[0]
    # the invoices fetched one by one were set aside, not mixed with the listed ones
    assert list((Path(over["landing"]) / night.run_id / "retired").glob("invoices-*"))
