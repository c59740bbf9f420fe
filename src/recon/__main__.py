"""`python -m recon` is the `recon` command."""

from recon.cli import main

main()
