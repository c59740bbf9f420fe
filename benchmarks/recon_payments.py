"""recon's extraction of the payments list alone, through recon's own steps.

`recon extract` has no option to extract one resource, so this driver calls the same steps
the CLI and the Dask runner call (`start_step`, then `extract_one_step(…, "payments")`);
the landed run is then loaded with `recon load` like any other.

    python -m benchmarks.recon_payments BASE_URL LANDING_DIR

prints one JSON line: run_id, status, records. Credentials come from RECON_API_KEY.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> int:
    from recon.night import nightly as steps

    base_url, landing = sys.argv[1], sys.argv[2]
    overrides = {"base_url": base_url, "landing": landing}
    started = time.perf_counter()
    run_id = steps.start_step(overrides)
    outcome = steps.extract_one_step(overrides, run_id, "payments")
    print(
        json.dumps(
            {
                "run_id": run_id,
                "status": outcome.status,
                "records": outcome.records,
                "extract_s": time.perf_counter() - started,
            }
        )
    )
    return 0 if outcome.status == "complete" else 3


if __name__ == "__main__":
    raise SystemExit(main())
