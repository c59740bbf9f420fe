"""Constants shared by the sandbox tests (imported by module name; no package needed)."""

from __future__ import annotations

from datetime import UTC, datetime

from recon.sandbox.app import DEMO_API_KEY, DEMO_BEARER_TOKEN

ANCHOR = datetime(2026, 11, 20, tzinfo=UTC)
KEY = {"x-api-key": DEMO_API_KEY}
BEARER = {"Authorization": f"Bearer {DEMO_BEARER_TOKEN}"}
