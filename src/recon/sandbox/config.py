"""How one sandbox behaves (``SandboxConfig``) and its documented demo credentials."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from recon.sandbox.faults import FaultProfile

__all__ = ["DEMO_API_KEY", "DEMO_BEARER_TOKEN", "SandboxConfig"]

DEMO_API_KEY = "sandbox-demo-key"
DEMO_BEARER_TOKEN = "sandbox-demo-token"  # noqa: S105 - the documented demo token


@dataclass
class SandboxConfig:
    """How one sandbox behaves. Secrets are kept out of ``repr``."""

    seed: int = 7
    payments: int = 1000
    faults: str = "none"
    api_key: str = field(default=DEMO_API_KEY, repr=False)
    bearer_token: str = field(default=DEMO_BEARER_TOKEN, repr=False)
    anchor: datetime | None = None
    refunds_list: bool = True
    invoices_list: bool = True
    idempotency_header: str = "Idempotency-Key"
    retry_after_s: int = 1
    slow_s: float = 0.5
    fault_rate: float = 0.15
    cache_records: int = 300_000
    anomalies: bool = True
    #: serialise every list record up front: "off" (on first touch), "sync" (before the app is
    #: returned) or "background" (in a daemon thread; /_sandbox/state says when it is done)
    prewarm: Literal["off", "sync", "background"] = "off"

    def __post_init__(self) -> None:
        FaultProfile.parse(self.faults)  # fail early on a bad profile name
        if self.prewarm not in ("off", "sync", "background"):
            raise ValueError("prewarm must be off, sync or background")
        if self.payments < 0:
            raise ValueError("payments must be >= 0")
