"""`recon serve` (the workbench: exceptions worked in a browser, with four eyes) and
`recon users add|list|disable|reset` (who may log in to it)."""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recon.cli.common import AccountName, DbPath, ReportsDir, app, guard, tell
from recon.errors import ConfigError

if TYPE_CHECKING:
    from recon.workbench.users import UserStore

__all__ = ["serve", "users_app"]

users_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Who may log in to the workbench (`recon serve`), and with which role.",
)
app.add_typer(users_app, name="users")

PasswordStdin = Annotated[
    bool,
    typer.Option(
        "--password-stdin",
        help="Read the password from standard input (one trailing newline is stripped).",
    ),
]


def _store(db: Path | None, account: str | None) -> UserStore:
    """The users beside the warehouse (the workbench imported when a command runs, not at start)."""
    from recon.findings.selection import warehouse_paths
    from recon.workbench.users import UserStore, users_path

    warehouse, _ = warehouse_paths(db, account)
    return UserStore(users_path(warehouse))


def _password(from_stdin: bool) -> str:
    if from_stdin:
        text = sys.stdin.read()
        return text[:-1] if text.endswith("\n") else text
    first = typer.prompt("Password", hide_input=True, err=True)
    again = typer.prompt("Again", hide_input=True, err=True)
    if first != again:
        raise ConfigError("password", "the two entries differ")
    return str(first)


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(help="The user name (a-z, 0-9, '.', '_', '-').")],
    role: Annotated[
        str, typer.Option("--role", help="viewer, preparer, approver or admin.")
    ] = "viewer",
    password_stdin: PasswordStdin = False,
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Add a user with a role; the password is stored only as an argon2 hash."""

    def go() -> None:
        store = _store(db, account)
        user = store.add(name, role, _password(password_stdin))
        tell(f"added {user.name} ({user.role}); users file: {store.path}")

    guard(go)


@users_app.command("list")
def users_list(db: DbPath = None, account: AccountName = None) -> None:
    """List the users, their roles and whether they are disabled."""

    def go() -> None:
        store = _store(db, account)
        for user in store.list():
            state = "disabled" if user.disabled else "enabled"
            tell(f"{user.name:<20} {user.role:<9} {state:<9} added {user.created_at}")

    guard(go)


@users_app.command("disable")
def users_disable(
    name: Annotated[str, typer.Argument(help="The user name.")],
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Disable a user: no more logins; their open sessions end at their next request."""

    def go() -> None:
        store = _store(db, account)
        store.disable(name)
        tell(f"disabled {name}")

    guard(go)


@users_app.command("reset")
def users_reset(
    name: Annotated[str, typer.Argument(help="The user name.")],
    password_stdin: PasswordStdin = False,
    db: DbPath = None,
    account: AccountName = None,
) -> None:
    """Set a new password for a user (and enable them again)."""

    def go() -> None:
        store = _store(db, account)
        store.reset(name, _password(password_stdin))
        tell(f"reset the password of {name}")

    guard(go)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to bind (default: this machine only).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="Port to listen on.", min=0, max=65535)] = 8765,
    tls_cert: Annotated[
        Path | None, typer.Option("--tls-cert", help="TLS certificate (PEM).", dir_okay=False)
    ] = None,
    tls_key: Annotated[
        Path | None, typer.Option("--tls-key", help="TLS private key (PEM).", dir_okay=False)
    ] = None,
    insecure_http: Annotated[
        bool,
        typer.Option(
            "--insecure-http", help="Serve plain HTTP on an address other than this machine's."
        ),
    ] = False,
    db: DbPath = None,
    reports: ReportsDir = None,
    account: AccountName = None,
) -> None:
    """The workbench: the findings queue, a finding's sides, proposals and the close in a
    browser, with a JSON API under /api/v1 (docs/workbench.md). Users: `recon users add`."""

    def go() -> None:
        import uvicorn

        from recon.config.settings import load_settings
        from recon.findings.selection import warehouse_paths
        from recon.workbench.app import create_app
        from recon.workbench.config import load_workbench_settings

        if (tls_cert is None) != (tls_key is None):
            raise ConfigError("--tls-cert", "needs --tls-key, and the other way round")
        tls = tls_cert is not None
        if not _loopback(host) and not tls and not insecure_http:
            raise ConfigError(
                "--host",
                f"{host} is reachable from other machines: serve it with --tls-cert and "
                "--tls-key, or say --insecure-http",
            )
        warehouse, _ = warehouse_paths(db, account)
        folder = reports or load_settings(**({"db": str(db)} if db else {})).reports
        web = create_app(
            warehouse,
            load_workbench_settings(),
            reports=Path(folder),
            secure_cookie=tls,
            # on this machine only: the names it is reached by (DNS rebinding is refused)
            allowed_hosts=["127.0.0.1", "localhost", "::1", "[::1]", host]
            if _loopback(host)
            else None,
        )
        scheme = "https" if tls else "http"
        tell(f"workbench on {scheme}://{host}:{port}/ (warehouse {warehouse}); Ctrl-C stops it")
        uvicorn.run(
            web,
            host=host,
            port=port,
            ssl_certfile=str(tls_cert) if tls_cert else None,
            ssl_keyfile=str(tls_key) if tls_key else None,
            log_level="warning",
            access_log=False,
            server_header=False,
        )

    guard(go)
