"""Part `night` (issue 23): the whole `recon nightly` as a user runs it, with the defaults.

- **Memory**: `recon nightly` against the benchmark sandbox (its own process) at each size:
  peak RSS of the largest process of the run (the flow process; Prefect's server is
  another), wall, CPU-seconds (user + system of the run and its children: contention on a
  shared machine inflates wall much more than CPU).
- **Pages past a list's end**: a second night against the same sandbox; list requests
  whose `skip` is at or past the list's length, and requests that were not a page taken
  (`requests - pages`), from the published warehouse (`api_calls`, `resource_scans`).
- **Fixed cost**: `recon nightly` against a sandbox with nothing in it (every list empty):
  on a new `PREFECT_HOME` before recon kept Prefect's migrated database (first), on another
  new one (cold: it copies that database) and again on it (warm), each in a new folder (its
  warehouse made that night); then once more in the warm night's folder (again: the
  warehouse of an earlier night there, as a user's nights find it).

    python -m benchmarks.run --only night                # 1M (+2M with --large)
    python -m benchmarks.run --only night --night-sizes 100000
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._common import API_KEY, RECON, run_measured, sandbox_process

_ENV = {
    "RECON_API_KEY": API_KEY,
    "RECON_BEARER_TOKEN": "sandbox-demo-token",
    "PYTHONUNBUFFERED": "1",
}


def night_run(
    url: str, work: Path, prefect_home: Path, cache: Path | None = None
) -> dict[str, Any]:
    """One `recon nightly` in `work` against `url`: wall, CPU-s, peak RSS, requests."""
    load_before = os.getloadavg()[0]
    env = {**_ENV, "RECON_BASE_URL": url, "PREFECT_HOME": str(prefect_home)}
    if cache is not None:  # where recon keeps Prefect's migrated empty database (template)
        env["XDG_CACHE_HOME"] = str(cache)
    proc = run_measured([RECON, "nightly"], env=env, cwd=work, timeout=3600)
    row: dict[str, Any] = {
        "wall_s": round(proc.wall_s, 2),
        "cpu_s": round(float(proc.extra.get("cpu_s", 0.0)), 2),
        "peak_rss_mb": round(proc.peak_rss_mb, 1),
        "flow_process_peak_rss_mb": round(float(proc.extra.get("own_peak_rss_mb", 0.0)), 1),
        "exit_code": proc.returncode,
        "ok": proc.returncode in (0, 3, 4),
        "loadavg": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    if not row["ok"]:
        row["error"] = proc.tail()
    row.update(_requests(work / "data" / "recon.duckdb"))
    return row


def _requests(db: Path) -> dict[str, Any]:
    """List requests of the newest run: all, pages taken, at or past each list's end."""
    import duckdb

    if not db.exists():
        return {}
    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute(
            """
            WITH run AS (SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1),
            scans AS (SELECT resource, pages, records FROM resource_scans
                      WHERE run_id = (SELECT run_id FROM run)),
            calls AS (SELECT resource, query FROM api_calls
                      WHERE run_id = (SELECT run_id FROM run) AND outcome = 'ok')
            SELECT (SELECT count(*) FROM calls),
                   (SELECT sum(pages) FROM scans),
                   (SELECT count(*) FROM calls c JOIN scans s USING (resource)
                    WHERE TRY_CAST(regexp_extract(c.query, 'skip=(\\d+)', 1) AS BIGINT)
                          >= s.records)
            """
        ).fetchone()
    finally:
        con.close()
    if row is None or not row[0]:
        return {}
    requests, pages, past_end = int(row[0]), int(row[1] or 0), int(row[2] or 0)
    return {
        "requests": requests,
        "pages": pages,
        "past_end": past_end,
        "past_end_pct": round(100.0 * past_end / requests, 2),
        "not_pages_pct": round(100.0 * (requests - pages) / requests, 2),
    }


def bench_night(sizes: list[int], *, say: Callable[[str], None] = print) -> dict[str, Any]:
    out: dict[str, Any] = {"sizes": []}
    with tempfile.TemporaryDirectory(prefix="recon-bench-night-") as tmp:
        root = Path(tmp)
        home = root / "prefect-home"
        cache = root / "cache"  # the benchmark's own: the first start finds no template
        with sandbox_process(0) as (url, _):
            # first: a new PREFECT_HOME, no template yet (Prefect migrates, recon keeps the
            # template); cold: another new PREFECT_HOME (copies it); warm: that one again
            for kind, prefect_home in (("first", root / "prefect-home-first"), ("cold", home)):
                say(f"  night: nothing to fetch, {kind} PREFECT_HOME")
                work = root / f"empty-{kind}"
                work.mkdir()
                out[f"empty_{kind}"] = night_run(url, work, prefect_home, cache)
            say("  night: nothing to fetch, warm PREFECT_HOME")
            work = root / "empty-warm"
            work.mkdir()
            out["empty_warm"] = night_run(url, work, home, cache)
            # a user's empty night: warm PREFECT_HOME and the warehouse of earlier nights
            say("  night: nothing to fetch, warm PREFECT_HOME, the warehouse there (again)")
            out["empty_again"] = night_run(url, work, home, cache)
        for size in sizes:
            entry: dict[str, Any] = {"payments": size}
            with sandbox_process(size) as (url, _):
                work = root / f"night-{size}"
                work.mkdir()
                for night in ("first", "second"):
                    say(f"  night: {size:,} payments, {night} night")
                    entry[night] = night_run(url, work, home)
            out["sizes"].append(entry)
    return out
