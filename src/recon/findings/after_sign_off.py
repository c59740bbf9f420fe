"""Items dated in a signed-off period that a later night changed (sql/close/after_sign_off.sql):
flagged in that night's report and in the next close pack ("after sign-off: N items
changed"), so a frozen month is never moved in silence."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import duckdb

from recon.warehouse.catalogue_views import ensure_live_records
from recon.warehouse.sql import read_sql

__all__ = ["AfterSignOff", "changed_after_sign_off"]


@dataclass(frozen=True)
class AfterSignOff:
    """A signed-off period whose items a night changed after its sign-off."""

    period: str
    signed_at: datetime
    items: int
    runs: tuple[str, ...]

    def line(self) -> str:
        return (
            f"after sign-off of {self.period} ({self.signed_at:%Y-%m-%d}): {self.items:,} "
            f"item(s) changed (runs {', '.join(self.runs)})"
        )


def changed_after_sign_off(
    con: duckdb.DuckDBPyConnection, upto: datetime, run_id: str | None = None
) -> list[AfterSignOff]:
    """Per signed-off period, the items dated in it that runs started after its sign-off
    (and by `upto`; `run_id`: that run only) changed. Empty for a warehouse without the
    tables (nothing was ever signed off there)."""
    try:
        ensure_live_records(con)  # a warehouse published before the view: a TEMP one
        rows = con.execute(
            read_sql("close/after_sign_off.sql"), {"upto": upto, "run_id": run_id}
        ).fetchall()
    except duckdb.Error:
        return []
    return [AfterSignOff(str(r[0]), r[1], int(r[2]), tuple(r[3])) for r in rows]
