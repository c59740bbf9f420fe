"""The realistic scenario (issue 10): a provider answering in 50 ms that allows 100 requests
a second (429 with `Retry-After` beyond), against recon's whole extraction.

    python -m benchmarks.realistic                     # 100k payments
    python -m benchmarks.realistic --sizes 100000,1000000
    python -m benchmarks.realistic --drive BASE LANDING  # (internal) one extraction

Per size: the sandbox in its own process (`recon sandbox serve --latency-ms 50 --rate 100`,
every record kept serialised), then `recon`'s extraction of every list in another process
(the same steps `recon nightly` runs), three ways: `RECON_CONCURRENCY=auto` (the default),
auto with the published rate (`RECON_RATE_LIMIT=100`), and `RECON_CONCURRENCY=1` (one page
at a time, as before issue 10). Printed: pages fetched, 429s, the rate-limit floor (the
fewest pages a lossless client must fetch ÷ the rate), extract time and its ratio to the
floor. Then (issue 23) the whole `recon nightly` against the same sandbox, less the fixed
cost of a night with nothing to fetch against an empty sandbox paced alike (warm
`PREFECT_HOME`), against the floor, with the pages it fetched past a list's end; and the
payments list alone, recon's extraction beside dlt's `rest_api` (tuned) on the same sandbox,
each against the payments list's own floor. With `--zero-latency`, the same extraction
against a sandbox without latency or rate limit, for this checkout and (`--baseline DIR`)
another one, e.g. main's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx

from benchmarks._common import API_KEY, PYTHON, ROOT, run_measured, sandbox_process
from benchmarks.night import night_run

LATENCY_MS = 50.0
RATE = 100.0
LISTS_WITH_HAS_MORE = ("payments",)


def drive(base_url: str, landing: str) -> dict[str, Any]:
    """One extraction of every list (the nightly's extract step); counts from its call log."""
    import duckdb

    from recon.night import nightly as steps

    overrides = {"base_url": base_url, "landing": landing, "db": f"{landing}/recon.duckdb"}
    run_id = steps.start_step(overrides)
    started = time.perf_counter()
    outcomes = steps.extract_step(overrides, run_id)
    extract_s = time.perf_counter() - started
    calls = [str(p) for p in Path(landing, run_id).glob("*/calls-*.parquet")]
    requests = throttled = past_end = 0
    if calls:
        con = duckdb.connect()
        ends = [(o.resource, o.records) for o in outcomes]
        con.execute("CREATE TABLE ends (resource VARCHAR, records BIGINT)")
        con.executemany("INSERT INTO ends VALUES (?, ?)", ends)
        row = con.execute(
            """
            SELECT count(*), count(*) FILTER (WHERE http_status = 429),
                   count(*) FILTER (WHERE outcome = 'ok' AND TRY_CAST(
                       regexp_extract(query, 'skip=(\\d+)', 1) AS BIGINT) >= e.records)
            FROM read_parquet(?) c LEFT JOIN ends e USING (resource)
            """,
            [calls],
        ).fetchone()
        con.close()
        if row:
            requests, throttled, past_end = int(row[0]), int(row[1]), int(row[2])
    return {
        "extract_s": round(extract_s, 3),
        "requests": requests,
        "throttled": throttled,
        # list requests answered at or past the list's end (as the night bench counts them)
        "past_end": past_end,
        "pages": sum(o.pages for o in outcomes),
        "records": sum(o.records for o in outcomes),
        "statuses": sorted({o.status for o in outcomes}),
    }


def floor_pages(counts: dict[str, int], page_size: int = 200) -> int:
    """The fewest list requests that read every record and see each list's end: full
    pages, plus the empty page that ends a list without `hasMore`."""
    total = 0
    for resource, n in counts.items():
        pages = max(1, math.ceil(n / page_size))
        if resource not in LISTS_WITH_HAS_MORE and n % page_size == 0:
            pages += 1  # a full last page proves nothing: one more, empty
        total += pages
    return total


def _serve(payments: int, *, realistic: bool) -> AbstractContextManager[tuple[str, float]]:
    """`recon sandbox serve` without its record cache, paced like a real provider or not."""
    options = ["--cache-records", "0"]
    if realistic:
        options += ["--latency-ms", f"{LATENCY_MS:g}", "--rate", f"{RATE:g}"]
    return sandbox_process(payments, seed=1, unbounded=False, options=options)


def _counts(url: str) -> dict[str, int]:
    truth = httpx.get(f"{url}/_sandbox/truth", timeout=600).json()
    listed = ("payments", "refunds", "disputes", "subscriptions", "invoices", "payment_intents")
    return {r: int(truth["counts"][r]) for r in listed}


def _extract(url: str, env: dict[str, str], src: Path | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="recon-realistic-") as tmp:
        full = {
            **{k: v for k, v in os.environ.items() if not k.startswith("RECON_")},
            "RECON_API_KEY": API_KEY,
            "PREFECT_HOME": str(Path(tmp) / "prefect"),
            **env,
        }
        if src is not None:  # another checkout's code (e.g. main's), with this venv
            full["PYTHONPATH"] = f"{src / 'src'}{os.pathsep}{ROOT}"
        proc = run_measured(
            [PYTHON, "-m", "benchmarks.realistic", "--drive", url, tmp], env=full, timeout=3600
        )
        if not proc.ok:
            raise RuntimeError(f"extraction failed: {proc.tail()}")
        out = proc.last_json()
        out["peak_rss_mb"] = round(proc.peak_rss_mb, 1)
        return out


def bench_realistic(
    sizes: list[int],
    *,
    sequential: bool = True,
    zero_latency: bool = True,
    baseline: Path | None = None,
    realistic: bool = True,
    night: bool = True,
    peers: bool = True,
    repeat: int = 1,
    say: Any = print,
) -> list[dict[str, Any]]:
    results = []
    for size in sizes:
        entry: dict[str, Any] = {"payments": size, "latency_ms": LATENCY_MS, "rate": RATE}
        if realistic:
            _realistic(entry, size, sequential=sequential, night=night, peers=peers, say=say)
        if zero_latency:
            entry["zero_latency"] = _zero_latency(size, baseline, repeat=repeat, say=say)
        results.append(entry)
    return results


def _realistic(
    entry: dict[str, Any], size: int, *, sequential: bool, night: bool, peers: bool, say: Any
) -> None:
    with _serve(size, realistic=True) as (url, _):
        counts = _counts(url)
        pages = floor_pages(counts)
        entry |= {"floor_pages": pages, "floor_s": round(pages / RATE, 2)}
        runs = {"auto": {"RECON_CONCURRENCY": "auto"}}
        runs["auto_rate"] = {"RECON_CONCURRENCY": "auto", "RECON_RATE_LIMIT": f"{RATE:g}"}
        if sequential:
            runs["sequential"] = {"RECON_CONCURRENCY": "1"}
        for name, env in runs.items():
            say(f"realistic {size:,}: {name} …")
            got = _extract(url, env)
            got["ratio"] = round(got["extract_s"] / entry["floor_s"], 2)
            entry[name] = got
            say(f"  {name}: {got}")
        if peers:
            entry["payments_alone"] = _payments_alone(url, counts["payments"], say=say)
        if night:
            entry["night"] = _whole_night(url, entry["floor_s"], say=say)


def _payments_alone(url: str, payments: int, *, say: Any) -> dict[str, Any]:
    """The payments list alone: recon's extraction and dlt's `rest_api` (tuned: Parquet, no
    compression) on the same paced sandbox, each against that list's own floor."""
    floor_s = floor_pages({"payments": payments}) / RATE
    out: dict[str, Any] = {"floor_s": round(floor_s, 2)}
    with tempfile.TemporaryDirectory(prefix="recon-realistic-peers-") as tmp:
        env = {**os.environ, "RECON_API_KEY": API_KEY, "PREFECT_HOME": f"{tmp}/prefect"}
        drivers = {
            "recon": [PYTHON, "-m", "benchmarks.recon_payments", url, f"{tmp}/recon"],
            "dlt": [PYTHON, "-m", "benchmarks.dlt_bench", url, f"{tmp}/dlt", "--mode", "tuned"],
        }
        for name, argv in drivers.items():
            say(f"  payments alone: {name} …")
            proc = run_measured(argv, env=env, timeout=3600)
            info = proc.last_json()
            seconds = info.get("extract_s", info.get("run_s"))
            if not proc.ok or seconds is None:
                out[name] = {"ok": False, "error": proc.tail()}
                continue
            out[name] = {
                "ok": True,
                "seconds": round(float(seconds), 2),
                "records": info.get("records", info.get("rows")),
                "ratio": round(float(seconds) / floor_s, 2),
                "cpu_s": round(float(proc.extra.get("cpu_s", 0.0)), 2),
                "peak_rss_mb": round(proc.peak_rss_mb, 1),
            }
            say(f"    {out[name]}")
    return out


def _whole_night(url: str, floor_s: float, *, say: Any) -> dict[str, Any]:
    """`recon nightly` as a user runs it against the paced sandbox, less the fixed cost: the
    same against an empty sandbox paced alike, on the same warm `PREFECT_HOME`."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="recon-realistic-night-") as tmp:
        root = Path(tmp)
        home = root / "prefect-home"
        with _serve(0, realistic=True) as (empty_url, _):
            for kind in ("warming", "fixed"):  # the first start makes the home warm
                say(f"  whole night, nothing to fetch ({kind}) …")
                (root / kind).mkdir()
                out[kind] = night_run(empty_url, root / kind, home)
        say("  whole night …")
        (root / "night").mkdir()
        out["nightly"] = night_run(url, root / "night", home)
    nightly, fixed = out["nightly"], out["fixed"]
    if nightly.get("ok") and fixed.get("ok"):
        beyond = nightly["wall_s"] - fixed["wall_s"]
        out["beyond_fixed_s"] = round(beyond, 2)
        out["ratio"] = round(beyond / floor_s, 2)
    say(f"  whole night: {out.get('beyond_fixed_s')} s beyond fixed, x{out.get('ratio')} floor")
    return out


def _zero_latency(size: int, baseline: Path | None, *, repeat: int, say: Any) -> dict[str, Any]:
    """The same extraction without latency or rate limit: the median of `repeat` runs each,
    taken in turn (auto, sequential, baseline, auto, …) so that load on the machine falls
    on all alike."""
    with _serve(size, realistic=False) as (url, _):
        _extract(url, {"RECON_CONCURRENCY": "1"})  # warm the server's cache
        runs: list[tuple[str, dict[str, str], Path | None]] = [
            ("auto", {"RECON_CONCURRENCY": "auto"}, None),
            ("sequential", {"RECON_CONCURRENCY": "1"}, None),
        ]
        if baseline is not None:
            runs.append(("baseline", {}, baseline))
        times: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in runs}
        for _ in range(max(1, repeat)):
            for name, env, src in runs:
                say(f"zero latency {size:,}: {name} …")
                times[name].append(_extract(url, env, src))
                say(f"  {name}: {times[name][-1]}")
        zero: dict[str, Any] = {}
        for name, got in times.items():
            best = sorted(got, key=lambda r: r["extract_s"])[len(got) // 2]
            zero[name] = {**best, "all_s": [r["extract_s"] for r in got]}
        return zero


def print_table(results: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Realistic scenario: {LATENCY_MS:g} ms, {RATE:g} req/s (429 beyond)")
    for col in ("payments", "run", "pages", "requests", "429s", "floor", "extract", "x floor"):
        table.add_column(col, justify="right")
    for e in results:
        for name in ("auto", "auto_rate", "sequential"):
            if name not in e:
                continue
            r = e[name]
            table.add_row(
                f"{e['payments']:,}",
                name,
                f"{r['pages']:,}",
                f"{r['requests']:,}",
                f"{r['throttled']:,}, past end {r.get('past_end', 0)}",
                f"{e['floor_s']:.2f} s ({e['floor_pages']} p)",
                f"{r['extract_s']:.2f} s",
                f"{r['ratio']:.2f}",
            )
        night = e.get("night", {})
        if "ratio" in night:
            r = night["nightly"]
            table.add_row(
                f"{e['payments']:,}",
                f"recon nightly - fixed ({night['fixed']['wall_s']:.1f} s)",
                f"{r.get('pages', 0):,}",
                f"{r.get('requests', 0):,}",
                f"past end {r.get('past_end', 0)}",
                f"{e['floor_s']:.2f} s",
                f"{night['beyond_fixed_s']:.2f} s",
                f"{night['ratio']:.2f}",
            )
        alone = e.get("payments_alone", {})
        for name in ("recon", "dlt"):
            r = alone.get(name, {})
            if r.get("ok"):
                table.add_row(
                    f"{e['payments']:,}",
                    f"payments list alone: {name}",
                    "",
                    "",
                    "",
                    f"{alone['floor_s']:.2f} s",
                    f"{r['seconds']:.2f} s",
                    f"{r['ratio']:.2f}",
                )
        for name, r in e.get("zero_latency", {}).items():
            table.add_row(
                f"{e['payments']:,}",
                f"zero latency, {name}",
                f"{r['pages']:,}",
                f"{r['requests']:,}",
                "",
                "",
                f"{r['extract_s']:.2f} s",
                "",
            )
    Console(width=140).print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--drive", nargs=2, metavar=("BASE_URL", "LANDING"))
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--no-sequential", action="store_true")
    parser.add_argument("--no-zero-latency", action="store_true")
    parser.add_argument("--baseline", type=Path, help="another checkout to compare (zero latency)")
    parser.add_argument("--no-realistic", action="store_true", help="zero latency only")
    parser.add_argument("--no-night", action="store_true", help="not the whole recon nightly")
    parser.add_argument("--no-peers", action="store_true", help="not the payments list with dlt")
    parser.add_argument("--repeat", type=int, default=1, help="zero-latency runs each (median)")
    args = parser.parse_args(argv)
    if args.drive:
        print(json.dumps(drive(*args.drive)), flush=True)
        return 0
    results = bench_realistic(
        [int(s) for s in args.sizes.split(",")],
        sequential=not args.no_sequential,
        zero_latency=not args.no_zero_latency,
        baseline=args.baseline,
        realistic=not args.no_realistic,
        night=not args.no_night,
        peers=not args.no_peers,
        repeat=args.repeat,
        say=lambda m: print(m, file=sys.stderr, flush=True),
    )
    print_table(results)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
