"""The `recon` command line."""

import typer

from recon.sandbox.cli import app as sandbox_app

app = typer.Typer(no_args_is_help=True, help="recon: reconcile the Merchant Payments API.")
app.add_typer(sandbox_app, name="sandbox")


def main() -> None:
    """Entry point of the `recon` console script."""
    app()
