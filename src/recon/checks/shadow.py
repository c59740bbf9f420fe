"""What a check's SQL sees of a resource that was not read whole tonight.

The warehouse keeps every record it ever loaded; a record on a page that failed tonight
still sits in its table with last night's values. Judging such a stale row would raise
findings on what recon did not read (a payment refunded since, judged as still confirmed).
So while the checks run, each resource whose scan this run is not complete is shadowed by
a TEMP view of the same name holding only the records read tonight
(`last_seen_run = <this run>`); a per-resource check sees a resource it leaves out as empty.

DuckDB resolves a name to a temp object before the database's own, also inside views and
macros (`refund_payments`, `counted_refunds`), so the check files stay plain SQL over the
tables: pasted into the `duckdb` shell they read everything the warehouse holds. A complete
scan's live records all carry this run, so a complete resource is never shadowed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import duckdb

from recon.catalogue.resources import api_resources

__all__ = ["Shadows"]

READ_TONIGHT = "read"
NOTHING = "none"
# The tables a run's scans fill (resources read from the API); identifiers are allow-listed.
RESOURCES = tuple(r.table for r in api_resources())


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


class Shadows:
    """The TEMP views shadowing resource tables for one run of the checks."""

    def __init__(self, con: duckdb.DuckDBPyConnection, run_id: str) -> None:
        self._con = con
        self._current: dict[str, str] = {}
        row = con.execute("SELECT current_database()").fetchone()
        self._catalog = _quote(str(row[0])) if row else "main"
        # Views take no parameters: the run id sits in a one-row temp table they read.
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _recon_ctx AS SELECT CAST(? AS VARCHAR) AS run_id",
            [run_id],
        )

    def apply(self, modes: Mapping[str, str]) -> None:
        """Make each resource read as `modes` says (absent: the table itself)."""
        unknown = set(modes) - set(RESOURCES)
        if unknown:  # identifiers are allow-listed, never formatted in from elsewhere
            raise ValueError(f"unknown resource(s) {sorted(unknown)}")
        for resource in RESOURCES:
            want = modes.get(resource)
            if self._current.get(resource) == want:
                continue
            if want is None:
                self._drop(resource)
                continue
            table = f"{self._catalog}.main.{_quote(resource)}"
            where = (
                "last_seen_run = (SELECT run_id FROM _recon_ctx)"
                if want == READ_TONIGHT
                else "false"
            )
            self._con.execute(
                f"CREATE OR REPLACE TEMP VIEW {_quote(resource)} AS "  # noqa: S608 - allow-listed
                f"SELECT * FROM {table} WHERE {where}"
            )
            self._current[resource] = want

    def clear(self) -> None:
        """Drop every shadow (the tables are themselves again)."""
        for resource in list(self._current):
            self._drop(resource)
        self._con.execute("DROP TABLE IF EXISTS temp._recon_ctx")

    def _drop(self, resource: str) -> None:
        self._con.execute(f"DROP VIEW IF EXISTS temp.{_quote(resource)}")
        self._current.pop(resource, None)


def night_modes(incomplete: Iterable[str]) -> dict[str, str]:
    """Every resource not read whole tonight reads as the records read tonight."""
    return {resource: READ_TONIGHT for resource in incomplete if resource in RESOURCES}
