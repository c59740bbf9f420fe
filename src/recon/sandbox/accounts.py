"""`recon sandbox serve --account NAME[:seed=S,payments=N,rate=R,latency_ms=L,faults=F]`:
several merchant accounts, each its own sandbox on its own port (the first on `--port`,
the next on the ports after it), with its own data, key and pacing.

An account's key is `RECON_SANDBOX_<NAME>_API_KEY` (token: `…_BEARER_TOKEN`) when set,
else the demo key `sandbox-<name>-key` (token `sandbox-<name>-token`), printed. Unset
options come from the `serve` command's own (seed: `--seed` plus the account's place, so
every account has different data). The command prints the `[accounts.*]` tables of a
`recon.toml` that reconciles them.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence

from recon.sandbox.config import SandboxConfig

__all__ = ["AccountSandbox", "account_sandboxes", "demo_key", "demo_token", "toml_for"]

_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
_INT = {"seed", "payments", "max_in_flight", "storm"}
_FLOAT = {"rate", "latency_ms", "latency_jitter_ms"}
_TEXT = {"faults"}


@dataclasses.dataclass(frozen=True)
class AccountSandbox:
    """One account's sandbox: its name, port and configuration (secrets out of repr)."""

    name: str
    port: int
    config: SandboxConfig
    key_from_env: bool


def demo_key(name: str) -> str:
    return f"sandbox-{name}-key"


def demo_token(name: str) -> str:
    return f"sandbox-{name}-token"


def _parse(spec: str) -> tuple[str, dict[str, object]]:
    name, _, rest = spec.partition(":")
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise ValueError(f"--account {spec!r}: a name is lower-case letters, digits and _")
    options: dict[str, object] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        try:
            if not sep:
                raise ValueError
            if key in _INT:
                options[key] = int(value)
            elif key in _FLOAT:
                options[key] = float(value)
            elif key in _TEXT:
                options[key] = value.strip()
            else:
                known = ", ".join(sorted(_INT | _FLOAT | _TEXT))
                raise ValueError(f"--account {spec!r}: unknown option {key!r} (known: {known})")
        except ValueError as exc:
            if str(exc):
                raise
            raise ValueError(f"--account {spec!r}: {item!r} is not KEY=NUMBER") from None
    return name, options


def account_sandboxes(specs: Sequence[str], base: SandboxConfig, port: int) -> list[AccountSandbox]:
    """The accounts `specs` name, on `port`, `port + 1`, …; a bad spec is a ValueError."""
    found: list[AccountSandbox] = []
    seen: set[str] = set()
    for place, spec in enumerate(specs):
        name, options = _parse(spec)
        if name in seen:
            raise ValueError(f"--account {name} is given twice")
        seen.add(name)
        env = f"RECON_SANDBOX_{name.upper()}"
        key = os.environ.get(f"{env}_API_KEY") or demo_key(name)
        token = os.environ.get(f"{env}_BEARER_TOKEN") or demo_token(name)
        options.setdefault("seed", base.seed + place)
        config = dataclasses.replace(base, api_key=key, bearer_token=token, **options)  # type: ignore[arg-type]
        found.append(
            AccountSandbox(name, port + place if port else 0, config, key != demo_key(name))
        )
    return found


def toml_for(accounts: Sequence[AccountSandbox], urls: Sequence[str]) -> list[str]:
    """The recon.toml tables and the exports that reconcile these accounts."""
    lines = []
    for account, url in zip(accounts, urls, strict=True):
        upper = account.name.upper()
        lines += [
            f"[accounts.{account.name}]",
            f'base_url = "{url}"',
            f'api_key_env = "RECON_{upper}_API_KEY"',
            f'bearer_token_env = "RECON_{upper}_BEARER_TOKEN"',
        ]
        if account.config.rate is not None:
            lines.append(f"rate_limit = {account.config.rate:g}")
        lines.append("")
    for account in accounts:
        if not account.key_from_env:
            upper = account.name.upper()
            lines.append(
                f"# export RECON_{upper}_API_KEY={demo_key(account.name)} "
                f"RECON_{upper}_BEARER_TOKEN={demo_token(account.name)}"
            )
    return lines
