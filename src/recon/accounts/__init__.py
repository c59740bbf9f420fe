"""Several merchant accounts in one night (`[accounts.<name>]` of recon.toml):

- `accounts.py`: each account's settings (shared ones, its own table, its secrets from the
  variables it names, its own paths);
- `night.py`: every account's night side by side, one failing never the others; the
  group's exit code, alert and page;
- `consolidated.py`: one DuckDB file over every account's published warehouse, each table
  and view with an `account` column.

Imports nothing itself, so that `recon.analyst.export` can use `consolidated` cheaply.
"""
