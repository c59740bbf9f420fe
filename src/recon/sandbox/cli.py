"""`recon sandbox …` commands."""

import typer

app = typer.Typer(no_args_is_help=True, help="The bundled sandbox Merchant Payments API.")
