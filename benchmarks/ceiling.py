"""Part 1, the ceiling: a bare httpx loop over every page of the payments list.

Sequential, page size 200, following `nextOffset`; each body parsed with the standard
`json` module and thrown away. This is the fastest a plain Python client can read the list
on this machine; every other figure is divided by it. Run in its own process:

    python -m benchmarks.ceiling http://127.0.0.1:PORT [resource]

prints one JSON line: records, pages, loop_s (the loop alone, after imports).
"""

from __future__ import annotations

import json
import sys
import time

import httpx

PAGE = 200
PATHS = {"payment_intents": "payment-intents"}


def fetch_all(
    base_url: str, resource: str = "payments", api_key: str = "sandbox-demo-key"
) -> dict[str, float | int]:
    records = 0
    pages = 0
    started = time.perf_counter()
    with httpx.Client(
        base_url=f"{base_url}/api/v1", headers={"x-api-key": api_key}, timeout=30.0
    ) as client:
        offset: int | None = 0
        while offset is not None:
            response = client.get(
                f"/{PATHS.get(resource, resource)}", params={"max-records": PAGE, "skip": offset}
            )
            response.raise_for_status()
            body = json.loads(response.content)
            data = body["data"]
            records += len(data)
            pages += 1
            if "hasMore" in body:
                offset = body.get("nextOffset") if body["hasMore"] else None
            else:  # lists without nextOffset: the next offset is the records received
                offset = offset + len(data) if data else None
    return {"records": records, "pages": pages, "loop_s": time.perf_counter() - started}


def main() -> int:
    base_url = sys.argv[1]
    resource = sys.argv[2] if len(sys.argv) > 2 else "payments"
    print(json.dumps(fetch_all(base_url, resource)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
