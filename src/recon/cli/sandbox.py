"""`recon sandbox …` commands."""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from recon.sandbox.config import SandboxConfig

app = typer.Typer(no_args_is_help=True, help="The bundled sandbox Merchant Payments API.")

_ANCHOR_HELP = "Data anchor (ISO 8601, UTC); default today 00:00 UTC."


def _anchor(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise typer.BadParameter(f"not an ISO 8601 date-time: {value!r}") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


@app.command()
def serve(
    port: Annotated[int, typer.Option(help="TCP port on 127.0.0.1.")] = 8000,
    seed: Annotated[int, typer.Option(help="Seed of the generated data and faults.")] = 7,
    payments: Annotated[int, typer.Option(help="Number of payments to generate.", min=0)] = 1000,
    faults: Annotated[
        str,
        typer.Option(help="none, flaky, chaos, drift, strict, capped, capped-payments (a,b)."),
    ] = "none",
    anchor: Annotated[str | None, typer.Option(help=_ANCHOR_HELP)] = None,
    day: Annotated[
        int,
        typer.Option(
            help="The sandbox's day (recon.sandbox.life): 0 the generated data; each later day "
            "adds new payments, refunds, status changes and books fixes.",
            min=0,
        ),
    ] = 0,
    retry_after: Annotated[int, typer.Option(help="Retry-After seconds of a 429.")] = 1,
    slow: Annotated[float, typer.Option(help="Delay in seconds of a slow answer.")] = 0.5,
    prewarm: Annotated[
        str,
        typer.Option(
            help="Serialise every list record up front: background (default), sync or off."
        ),
    ] = "background",
    cache_records: Annotated[
        int,
        typer.Option(help="Records kept serialised per list (LRU); 0 keeps them all.", min=0),
    ] = 300_000,
    latency_ms: Annotated[
        float, typer.Option(help="Every API answer takes this many milliseconds.", min=0)
    ] = 0,
    latency_jitter_ms: Annotated[
        float,
        typer.Option(help="Plus 0..J ms more per request, deterministic from the seed.", min=0),
    ] = 0,
    rate: Annotated[
        float | None,
        typer.Option(help="Token bucket: N requests a second, then 429 with Retry-After."),
    ] = None,
    burst: Annotated[
        int | None, typer.Option(help="Requests the token bucket allows at once (default: rate).")
    ] = None,
    max_in_flight: Annotated[
        int | None, typer.Option(help="At most N requests answered at once; 503 beyond.")
    ] = None,
    storm: Annotated[
        int, typer.Option(help="The first N API requests get 429 with Retry-After.", min=0)
    ] = 0,
    cap_after: Annotated[
        int | None,
        typer.Option(help="After N list requests, pages hold at most --cap-to records."),
    ] = None,
    cap_to: Annotated[
        int, typer.Option(help="The page cap that --cap-after switches on.", min=1, max=200)
    ] = 100,
    shift: Annotated[
        list[str] | None,
        typer.Option(
            help="LIST:after=N,delete=K,before=X,insert=I: after the N-th page of LIST, delete "
            "K records before offset X and insert I at the head (repeatable)."
        ),
    ] = None,
    delay: Annotated[
        list[str] | None,
        typer.Option(help="LIST:SKIP=MS: the page of LIST at SKIP takes MS longer (repeatable)."),
    ] = None,
    poison: Annotated[
        list[str] | None,
        typer.Option(
            help="LIST:INDEX: every page of LIST that holds record INDEX fails with a 500 "
            "(repeatable; switch off with POST /_sandbox/faults)."
        ),
    ] = None,
    account: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME[:seed=S,payments=N,rate=R,latency_ms=L,faults=F]: serve several merchant "
            "accounts, one per port from --port on (repeatable; recon.sandbox.accounts).",
        ),
    ] = None,
    anomaly_rate: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=0.5,
            help="Share of records carrying a planted anomaly, e.g. 0.13 like a provider's "
            "first night (default: a few hundred of each kind at most).",
        ),
    ] = None,
) -> None:
    """Serve the sandbox API on 127.0.0.1 (keys from RECON_SANDBOX_API_KEY / _BEARER_TOKEN)."""
    from recon.sandbox.app import SandboxConfig, create_app
    from recon.sandbox.credentials import DEMO_API_KEY, DEMO_BEARER_TOKEN, sandbox_credentials
    from recon.sandbox.server import HOST, serve_app

    key, token = sandbox_credentials()
    try:
        config = SandboxConfig(
            seed=seed,
            payments=payments,
            faults=faults,
            api_key=key,
            bearer_token=token,
            anchor=_anchor(anchor),
            day=day,
            retry_after_s=retry_after,
            slow_s=slow,
            prewarm=prewarm,  # type: ignore[arg-type]  # validated by SandboxConfig
            cache_records=cache_records,
            latency_ms=latency_ms,
            latency_jitter_ms=latency_jitter_ms,
            rate=rate,
            burst=burst,
            max_in_flight=max_in_flight,
            storm=storm,
            cap_after=cap_after,
            cap_to=cap_to,
            shifts=tuple(shift or ()),
            delays=tuple(delay or ()),
            poison=tuple(poison or ()),
            anomaly_rate=anomaly_rate,
        )
    except ValueError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    if account:
        _serve_accounts(account, config, port)
        return
    base = f"http://{HOST}:{port}"
    started = time.perf_counter()
    sandbox = create_app(config)
    if prewarm == "sync":
        typer.echo(f"recon sandbox: data generated in {time.perf_counter() - started:.1f} s")
    typer.echo(f"recon sandbox: {base}/api/v1  ({payments} payments, seed {seed}, faults {faults})")
    if key == DEMO_API_KEY:
        typer.echo(f"  demo API key (x-api-key): {DEMO_API_KEY}")
    else:
        typer.echo("  API key: from RECON_SANDBOX_API_KEY")
    if token == DEMO_BEARER_TOKEN:
        typer.echo(f"  demo bearer token: {DEMO_BEARER_TOKEN}")
    typer.echo(f"  OpenAPI: {base}/openapi.yaml   truth: {base}/_sandbox/truth")
    for line in _described(config):
        typer.echo(f"  {line}")
    typer.echo(f"  faults and pacing: {base}/_sandbox/faults (POST switches them)")
    sys.stdout.flush()
    serve_app(sandbox, port)


def _serve_accounts(specs: list[str], config: SandboxConfig, port: int) -> None:
    """Several accounts, each its own sandbox on its own port, until interrupted."""
    from recon.sandbox.accounts import account_sandboxes, toml_for
    from recon.sandbox.app import create_app
    from recon.sandbox.server import serve_apps

    try:
        accounts = account_sandboxes(specs, config, port)
    except (ValueError, TypeError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None

    def ready(urls: list[str]) -> None:
        for acc, url in zip(accounts, urls, strict=True):
            typer.echo(
                f"recon sandbox: account {acc.name} at {url}/api/v1  ({acc.config.payments} "
                f"payments, seed {acc.config.seed}, faults {acc.config.faults})"
            )
            for line in _described(acc.config):
                typer.echo(f"  {line}")
        typer.echo("\n# recon.toml for these accounts:")
        for line in toml_for(accounts, urls):
            typer.echo(line)
        sys.stdout.flush()

    serve_apps([(create_app(acc.config), acc.port) for acc in accounts], ready)


def _described(config: SandboxConfig) -> list[str]:
    """The pacing and scripted faults of ``config`` in words (nothing when none is set)."""
    pacing = []
    if config.latency_ms or config.latency_jitter_ms:
        pacing.append(f"latency {config.latency_ms:g} ms (+0..{config.latency_jitter_ms:g})")
    if config.rate is not None:
        pacing.append(f"rate {config.rate:g}/s (burst {config.burst or 'the rate'})")
    if config.max_in_flight is not None:
        pacing.append(f"at most {config.max_in_flight} in flight")
    sw = config.switches()
    faults = [f"storm of {sw.storm}"] if sw.storm else []
    if sw.cap_after is not None:
        faults.append(f"cap {sw.cap_to} after {sw.cap_after} list requests")
    faults += [f"shift {s}" for s in sw.shifts]
    faults += [f"delay {d} ms" for d in sw.delays]
    faults += [f"poison {p}" for p in sw.poison]
    lines = [f"pacing: {', '.join(pacing)}"] if pacing else []
    return lines + ([f"scripted faults: {', '.join(faults)}"] if faults else [])


@app.command()
def truth(
    seed: Annotated[int, typer.Option(help="Seed of the generated data.")] = 7,
    payments: Annotated[int, typer.Option(help="Number of payments.", min=0)] = 1000,
    anchor: Annotated[str | None, typer.Option(help=_ANCHOR_HELP)] = None,
) -> None:
    """Print the ground truth (expected findings of checks 2-17, planted anomalies) as JSON."""
    from recon.sandbox.data import Dataset
    from recon.sandbox.truth import truth_json

    data = truth_json(Dataset(seed, payments, _anchor(anchor)))
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


@app.command()
def ledger(
    out: Annotated[Path, typer.Option("--out", help="Folder to write the books into.")],
    seed: Annotated[int, typer.Option(help="Seed of the generated data.")] = 7,
    payments: Annotated[int, typer.Option(help="Number of payments.", min=0)] = 1000,
    anchor: Annotated[str | None, typer.Option(help=_ANCHOR_HELP)] = None,
    day: Annotated[
        int,
        typer.Option(
            help="The sandbox's day (recon.sandbox.life): 0 the generated data; each later day "
            "adds new payments, refunds, status changes and books fixes.",
            min=0,
        ),
    ] = 0,
    formats: Annotated[
        str, typer.Option("--format", help="Comma-separated: csv, parquet, xlsx.")
    ] = "csv,parquet,xlsx",
) -> None:
    """Write the merchant's books for the sandbox's data, with planted breaks of every kind."""
    from recon.sandbox.ledger.files import describe_books

    chosen = [f.strip() for f in formats.split(",") if f.strip()]
    try:
        lines = describe_books(seed, payments, _anchor(anchor), out, chosen, day=day)
    except ValueError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    for line in lines:
        typer.echo(line)


@app.command()
def bank(
    out: Annotated[Path, typer.Option("--out", help="Folder to write the statements into.")],
    seed: Annotated[int, typer.Option(help="Seed of the generated data.")] = 7,
    payments: Annotated[int, typer.Option(help="Number of payments.", min=0)] = 1000,
    anchor: Annotated[str | None, typer.Option(help=_ANCHOR_HELP)] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="Every currency in one format: camt053, mt940, bai2 or csv (default: each "
            "currency in its bank's: EUR camt053, USD and BHD mt940, GBP bai2, JPY csv).",
        ),
    ] = None,
) -> None:
    """Write bank statements for the sandbox's payments, with planted missing, short and
    unexpected credits and a gap; the ground truth goes to truth.json beside them."""
    from recon.sandbox.bank import plan_statements, write_statements
    from recon.sandbox.bank.writers import EXTENSIONS
    from recon.sandbox.data import Dataset

    if fmt is not None and fmt not in EXTENSIONS:
        typer.echo(f"error: --format must be one of {', '.join(EXTENSIONS)}", err=True)
        raise typer.Exit(2)
    try:
        plan = plan_statements(Dataset(seed, payments, _anchor(anchor)))
    except (ValueError, IndexError) as err:
        typer.echo(f"error: too few payments for statements with plants ({err})", err=True)
        raise typer.Exit(2) from None
    truth = write_statements(plan, out, fmt)
    for name in truth["files"]:
        typer.echo(f"wrote {out / name}")
    typer.echo(f"ground truth: {out / 'truth.json'}")
    match = truth["provider_match"]
    typer.echo(f"RECON_BANK_STATEMENTS='{out}/bank-*' RECON_BANK_PROVIDER_MATCH='{match}'")


@app.command()
def openapi() -> None:
    """Print the sandbox's OpenAPI document (YAML)."""
    from recon.sandbox.openapi import openapi_text

    typer.echo(openapi_text(), nl=False)
