"""How one sandbox behaves (``SandboxConfig``); the demo credentials come from ``credentials``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from recon.sandbox.credentials import DEMO_API_KEY, DEMO_BEARER_TOKEN
from recon.sandbox.faults import FaultProfile
from recon.sandbox.switches import Delay, FaultSwitches, Poison, Shift

__all__ = ["DEMO_API_KEY", "DEMO_BEARER_TOKEN", "SandboxConfig"]


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
    #: records kept serialised per list (an LRU of 1,000-record chunks); 0 = keep them all
    cache_records: int = 300_000
    anomalies: bool = True
    #: share of records carrying a planted anomaly (0.13: a real first night, issue 38);
    #: None: a few hundred of each kind at most (recon.sandbox.records.keyspace)
    anomaly_rate: float | None = None
    #: the sandbox's day (recon.sandbox.life): 0 is the generated data set; each later day
    #: has new payments, refunds and status changes on top (`recon nightly --sandbox` counts
    #: its nights)
    day: int = 0
    #: serialise every list record up front: "off" (on first touch), "sync" (before the app is
    #: returned) or "background" (in a daemon thread; /_sandbox/state says when it is done)
    prewarm: Literal["off", "sync", "background"] = "off"
    # ---- pacing, as a real API (docs/sandbox.md "Realism")
    #: every API answer takes this long, plus a jitter of 0..latency_jitter_ms from the seed
    latency_ms: float = 0
    latency_jitter_ms: float = 0
    #: a token bucket of `rate` requests a second (burst: `burst`, default `rate`); 429 past it
    rate: float | None = None
    burst: int | None = None
    #: at most this many requests answered at once; 503 beyond
    max_in_flight: int | None = None
    # ---- scripted faults (recon.sandbox.switches), switchable at run time
    storm: int = 0
    cap_after: int | None = None
    cap_to: int = 100
    shifts: Sequence[Shift | str] = ()
    delays: Sequence[Delay | str] = ()
    poison: Sequence[Poison | str] = ()
    #: how the sandbox waits and tells time (tests inject their own)
    sleep: Callable[[float], Awaitable[None]] = field(
        default=asyncio.sleep, repr=False, compare=False
    )
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    def __post_init__(self) -> None:
        FaultProfile.parse(self.faults)  # fail early on a bad profile name
        if self.prewarm not in ("off", "sync", "background"):
            raise ValueError("prewarm must be off, sync or background")
        if self.payments < 0:
            raise ValueError("payments must be >= 0")
        if self.day < 0:
            raise ValueError("day must be >= 0")
        if self.cache_records < 0:
            raise ValueError("cache_records must be >= 0 (0 keeps every record)")
        if self.latency_ms < 0 or self.latency_jitter_ms < 0:
            raise ValueError("latency_ms and latency_jitter_ms must be >= 0")
        if self.rate is not None and self.rate <= 0:
            raise ValueError("rate must be > 0 requests a second")
        if self.burst is not None and self.burst < 1:
            raise ValueError("burst must be >= 1")
        if self.max_in_flight is not None and self.max_in_flight < 1:
            raise ValueError("max_in_flight must be >= 1")
        if self.anomaly_rate is not None and not 0 <= self.anomaly_rate <= 0.5:
            raise ValueError("anomaly_rate must be between 0 and 0.5")
        if self.storm < 0:
            raise ValueError("storm must be >= 0 requests")
        if self.cap_after is not None and self.cap_after < 0:
            raise ValueError("cap_after must be >= 0 list requests")
        if not 1 <= self.cap_to <= 200:
            raise ValueError("cap_to must be from 1 to 200 records")
        self.switches()  # parse the text forms now: a typo fails here, not mid-run

    def switches(self) -> FaultSwitches:
        """The scripted faults this configuration starts with."""
        return FaultSwitches(
            storm=self.storm,
            cap_after=self.cap_after,
            cap_to=self.cap_to,
        ).changed(shifts=self.shifts, delays=self.delays, poison=self.poison)
