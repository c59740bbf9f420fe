"""Part 3, the peer: dlt's `rest_api` source over the same payments list, into DuckDB.

Offset paginator with the sandbox's parameter names (`max-records` / `skip`), no total
(`total_path: None`), stopping on the first empty page. Note dlt advances the offset by the
page size it asked for and ignores `nextOffset` (docs/facts.md): fine on this uncapped sandbox.

    python -m benchmarks.dlt_bench URL WORKDIR --mode default|tuned

`tuned` = parquet loader files with compression off. Prints one JSON line: rows landed
(counted in the DuckDB file afterwards), run_s (the pipeline run alone, after imports).
Run in its own process so that its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

PAGE = 200


def run(
    base_url: str, workdir: Path, mode: str, api_key: str = "sandbox-demo-key"
) -> dict[str, Any]:
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ["DLT_DATA_DIR"] = str(workdir / "dlt-data")
    os.environ["RUNTIME__LOG_LEVEL"] = "WARNING"
    os.environ["RUNTIME__DLTHUB_TELEMETRY"] = "false"
    if mode == "tuned":
        os.environ["DATA_WRITER__DISABLE_COMPRESSION"] = "true"
        os.environ["NORMALIZE__DATA_WRITER__DISABLE_COMPRESSION"] = "true"

    import dlt
    from dlt.sources.rest_api import rest_api_source

    config: Any = {
        "client": {
            "base_url": f"{base_url}/api/v1/",
            "headers": {"x-api-key": api_key},
            "paginator": {
                "type": "offset",
                "limit": PAGE,
                "offset": 0,
                "limit_param": "max-records",
                "offset_param": "skip",
                "total_path": None,
                "stop_after_empty_page": True,
            },
        },
        "resources": [
            {"name": "payments", "endpoint": {"path": "payments", "data_selector": "data"}},
        ],
    }
    db_path = workdir / f"dlt-{mode}.duckdb"
    pipeline = dlt.pipeline(
        pipeline_name=f"bench_{mode}",
        pipelines_dir=str(workdir / "pipelines"),
        destination=dlt.destinations.duckdb(str(db_path)),
        dataset_name="bench",
    )
    started = time.perf_counter()
    if mode == "tuned":
        pipeline.run(rest_api_source(config), loader_file_format="parquet")
    else:
        pipeline.run(rest_api_source(config))
    run_s = time.perf_counter() - started
    import duckdb

    con = duckdb.connect(str(db_path), read_only=True)
    try:
        row = con.execute("SELECT count(*), count(DISTINCT id) FROM bench.payments").fetchone()
    finally:
        con.close()
    rows, distinct = (int(row[0]), int(row[1])) if row else (0, 0)
    return {"mode": mode, "rows": rows, "distinct_ids": distinct, "run_s": run_s}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("base_url")
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--mode", choices=("default", "tuned"), default="default")
    args = parser.parse_args()
    print(json.dumps(run(args.base_url, args.workdir, args.mode)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
