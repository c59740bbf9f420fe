"""Crash: `kill -9` at random points of a night (seeded RNG), each followed by --resume: 6
points in `make test`, 20 in `make test-scale` (CI runs both).

Every iteration starts from the same published warehouse (one complete night), runs night 2
as `run_local` in a subprocess and SIGKILLs it after a random delay (every 4th time the
first `--resume` is killed too). Pass, after each kill:
the published warehouse opens read-only at once (no lock, no stale .wal in the way) and holds
exactly night 1 or exactly the finished night 2 — never anything half-written; after
`--resume` the warehouse equals an uninterrupted night 2's, and no .wal is left behind.
The three hand-picked kill points (first batch, mid-extract, during load) are in
tests/night/test_resume.py.
"""

from __future__ import annotations

import random
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from recon.night import nightly as steps
from tests.night.test_resume import _content, _kill, _start

from .conftest import overrides_for, sandbox

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SEED, PAYMENTS = 21, 2500


def _published(db: Path) -> dict[str, Any]:
    return _content(db)  # opens read-only: raises if locked, half-written or blocked by a .wal


@pytest.mark.parametrize("kills", [6, pytest.param(20, marks=pytest.mark.scale)])
def test_crash_kill_9_then_resume_equals_an_uninterrupted_run(tmp_path: Path, kills: int) -> None:
    rng = random.Random(7)
    outcomes: list[str] = []
    with sandbox(seed=SEED, payments=PAYMENTS) as url:
        base = overrides_for(tmp_path / "base", url)
        assert steps.run_local(base).status == "complete"
        night1 = _published(Path(base["db"]))

        ref = overrides_for(tmp_path / "ref", url)
        Path(ref["db"]).parent.mkdir(parents=True)
        shutil.copy(base["db"], ref["db"])
        started = time.monotonic()
        proc = _start(ref)  # an uninterrupted night 2, as a subprocess (calibrates the delays)
        _out, err = proc.communicate(timeout=300)
        whole = time.monotonic() - started
        assert proc.returncode == 0, err
        night2 = _published(Path(ref["db"]))
        assert night2 != night1

        for i in range(kills):
            run = overrides_for(tmp_path / f"kill{i:02d}", url)
            db = Path(run["db"])
            db.parent.mkdir(parents=True)
            shutil.copy(base["db"], db)
            delay = rng.uniform(0.5, 0.95 * whole)  # imports take the first ~0.5 s
            proc = _start(run)
            time.sleep(delay)
            _kill(proc)

            seen = _published(db)
            assert seen in (night1, night2), f"kill {i} after {delay:.2f}s: half-written"
            if not any(Path(run["landing"]).glob("*/run.json")):
                resumed = _start(run)  # killed before the run existed: nothing to resume
                outcomes.append("before-start")
            else:
                # Also after publishing (killed while reporting): resuming is a no-op that
                # writes the report.
                if i % 4 == 3 and seen != night2:  # every 4th: kill the resume too
                    again = _start(run, resume="latest")
                    time.sleep(rng.uniform(0.5, 0.8 * whole))
                    _kill(again)
                    seen = _published(db)
                    assert seen in (night1, night2), f"kill {i} (resume): half-written"
                    outcomes.append("killed-resume")
                resumed = _start(run, resume="latest")
                outcomes.append("published" if seen == night2 else "resumed")
            out, err = resumed.communicate(timeout=300)
            assert resumed.returncode == 0, f"kill {i} after {delay:.2f}s: {err[-2000:]}"
            assert _published(db) == night2, f"kill {i} after {delay:.2f}s"
            assert not Path(f"{db}.wal").exists()
            run_id = out.split()[0]
            report = Path(run["reports"]) / run_id
            assert (report / "report.html").exists(), f"kill {i}: no report after resume"
            assert (report / "summary.json").exists()
    print(f"crash: {kills} kills over {whole:.1f}s runs: {outcomes}")
    # Most kills land mid-run (the rest before the run existed or after publishing);
    # loose, so that a loaded machine does not make it flaky.
    assert outcomes.count("resumed") >= kills // 4
