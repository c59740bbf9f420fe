"""Prefect's API server for one night, started without Prefect's command line (issue 23).

`python -m pipelines._api_server PORT` is what `prefect server start --no-services --no-ui`
runs — uvicorn serving `create_app(webserver_only=True)` — minus the import of Prefect's
command line (its whole command tree) and minus block-type registration, which recon's
flows do not use (`PREFECT_SERVER_REGISTER_BLOCKS_ON_START=false`: on a new PREFECT_HOME it
writes every block type into the database). `pipelines.server` starts it; `recon schedule`
still uses `prefect server start` (it needs the scheduler).
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    port = int(argv[0])
    os.environ.setdefault("PREFECT_SERVER_REGISTER_BLOCKS_ON_START", "false")
    os.environ["PREFECT_SERVER_UI_ENABLED"] = "false"
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"

    import uvicorn
    from prefect.server.api.server import create_app

    app = create_app(final=True, webserver_only=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error")
    return 0


if __name__ == "__main__":  # pragma: no cover - a child process of pipelines.server
    raise SystemExit(main(sys.argv[1:]))
