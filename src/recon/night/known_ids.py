"""The ids a night fetches one by one, for a resource whose list the provider does not offer
(`recon.night.extract.fetch_by_id`) and for the per-customer lists: from an ids file, from
the books, and from what other records landed tonight reference."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow.parquet as pq

from recon.catalogue.resources import api_list, nightly_resources
from recon.config.settings import Settings
from recon.errors import ConfigError
from recon.ledger.sources import book_ids
from recon.warehouse.landing import RunLanding
from recon.warehouse.sql import read_sql

__all__ = ["customers_in_landing", "ids_to_fetch"]


def ids_to_fetch(settings: Settings, landing: RunLanding, resource: str) -> list[str]:
    """Ids of `resource` to fetch one by one: its ids file, the ids the books name, then ids
    other records reference."""
    api = api_list(resource)
    ids: dict[str, None] = {}
    ids_file = getattr(settings, api.ids_file_setting) if api.ids_file_setting else None
    if ids_file is not None:
        try:
            text = ids_file.read_text(encoding="utf-8")
        except OSError as exc:
            name = f"RECON_{(api.ids_file_setting or '').upper()}"
            raise ConfigError(name, f"cannot be read: {exc.strerror}") from None
        for line in text.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                ids[line.strip()] = None
    if api.ids_in_books is not None:
        ids.update(dict.fromkeys(book_ids(settings, *api.ids_in_books)))
    others = [r.name for r in nightly_resources() if r.name != resource]
    for ident in _referenced(landing, others, api.referenced_by):
        ids[ident] = None
    return list(ids)


def _referenced(landing: RunLanding, resources: Sequence[str], fields: Sequence[str]) -> list[str]:
    """Distinct string values of top-level `fields` in this run's landed `resources`."""
    import duckdb  # only needed here

    files = [
        str(p) for r in resources for p in landing.files(r, "batch") if pq.read_metadata(p).num_rows
    ]
    if not files:
        return []
    con = duckdb.connect()
    try:
        found: set[str] = set()
        sql = read_sql("load/referenced_ids.sql")
        for name in fields:
            rows = con.execute(sql, {"path": f"$.{name}", "files": files}).fetchall()
            found.update(r[0] for r in rows)
        return sorted(found)
    finally:
        con.close()


def customers_in_landing(landing: RunLanding) -> list[str]:
    """Customer ids referenced by this run's landed subscriptions and invoices."""
    return _referenced(landing, ("subscriptions", "invoices"), ("customerId",))
