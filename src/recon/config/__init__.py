"""What recon is told: settings (`RECON_*`, `recon.toml`), the books' layout, the
accounts of `[accounts]`, a night's overrides and its schedule."""
