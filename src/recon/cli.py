"""The `recon` command line."""

import typer

app = typer.Typer(no_args_is_help=True, help="recon: reconcile the Merchant Payments API.")


def main() -> None:
    """Entry point of the `recon` console script."""
    app()
