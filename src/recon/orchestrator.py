"""How the command line reaches the orchestrator without importing it: one entry point.

recon's library never imports Prefect. Its flows (`pipelines`) register an
`Orchestrator` under the `recon.orchestrator` entry point (pyproject.toml); the CLI loads it
when a command needs it, so Prefect is imported (and pays its start-up) only then, and
another orchestrator could be installed in its place.

    orchestrator = load_orchestrator()
    with orchestrator.session(say):      # a Prefect server, before Prefect is imported
        summary = orchestrator.run_nightly(overrides, NightlyOptions(trigger="cli"))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from recon.plugins import load_plugin

if TYPE_CHECKING:
    from recon.accounts.night import GroupSummary
    from recon.config.schedule import Plan
    from recon.night.nightly import RunSummary

__all__ = ["ENTRY_POINT_GROUP", "NightlyOptions", "Orchestrator", "load_orchestrator"]

ENTRY_POINT_GROUP = "recon.orchestrator"

Say = Callable[[str], None]


@dataclass(frozen=True)
class NightlyOptions:
    """How to run one nightly (never a secret: the orchestrator may store these)."""

    trigger: str = "cli"
    resume: str | None = None
    fail_on: str | None = None
    payment_methods: bool = False
    task_runner: Literal["threads", "dask"] = "threads"
    dask_address: str | None = None
    retry_failed: str | None = None  # finish this incomplete run ("latest": the newest)


class Orchestrator(Protocol):
    """Runs the nightly job and serves it on a schedule."""

    def session(self, say: Say) -> AbstractContextManager[str]:
        """Make the orchestrator ready for a run (e.g. start a server); yields where it is.
        It may still be starting when this yields (the caller's own checks run meanwhile):
        `run_nightly` and `run_group` wait for it."""
        ...

    def run_nightly(self, overrides: Mapping[str, Any], options: NightlyOptions) -> RunSummary:
        """Run extract → load → check → publish → report once, inside a `session`."""
        ...

    def run_group(
        self,
        overrides: Mapping[str, Any],
        accounts: Sequence[str],
        night_id: str,
        options: NightlyOptions,
    ) -> GroupSummary:
        """Run every account's night side by side (`recon.accounts`), inside a `session`."""
        ...

    def serve_schedule(self, plan: Plan, say: Say) -> None:
        """Run the nightly job on `plan` until interrupted."""
        ...


def load_orchestrator(name: str = "prefect") -> Orchestrator:
    """The orchestrator installed under `name` in the `recon.orchestrator` entry points."""
    orchestrator: Orchestrator = load_plugin(ENTRY_POINT_GROUP, name, setting="orchestrator")
    return orchestrator
