"""The field mapping as the load SQL binds it: JSON paths of the fields the spec does not show.

`Settings.fields` (defaults in `recon.config.settings.DEFAULT_FIELDS`) names, per resource, the
record field recon reads for each of its columns whose name the spec leaves open. The load
selects (recon.warehouse.catalogue_tables.load_select) read those fields through bound JSON paths,
never
formatted in:

    load_parameters("disputes", fields)
    -> {"path_payment_id": '$."paymentId"', "path_amount_minor": '$."amount"."amountMinor"', …}

and `sql/load/field_presence.sql` counts, per run, how many landed records carry each one,
so that a check needing a field that no record has says so (`requires_fields`).
"""

from __future__ import annotations

from collections.abc import Mapping

from recon.catalogue.resources import CATALOGUE
from recon.config.settings import DEFAULT_FIELDS

__all__ = ["FieldMap", "json_path", "load_parameters", "presence_parameters"]

FieldMap = Mapping[str, Mapping[str, str]]


def _is_money_object(resource: str, field: str) -> bool:
    """Whether the mapped `field` names a Money object (`amountMinor`, `currency`: fixed
    members, docs/design.md), as the catalogue says: `amount_json = "{field}.amountMinor"`."""
    entry = CATALOGUE.get(resource)
    records = entry.records if entry is not None else None
    return records is not None and records.amount_json == f"{{{field}}}.amountMinor"


def json_path(name: str) -> str:
    """`amount.amountMinor` -> `$."amount"."amountMinor"` (each key quoted)."""
    return "$" + "".join(f'."{part}"' for part in name.split("."))


def _mapping(resource: str, fields: FieldMap | None) -> Mapping[str, str]:
    given = fields if fields is not None else DEFAULT_FIELDS
    return given.get(resource) or DEFAULT_FIELDS.get(resource, {})


def load_parameters(resource: str, fields: FieldMap | None = None) -> dict[str, str]:
    """The `$path_<column>` parameters the load select binds (empty for payment
    methods, whose fields are all read at fixed names)."""
    out: dict[str, str] = {}
    for field, name in _mapping(resource, fields).items():
        if _is_money_object(resource, field):
            out[f"path_{field}_minor"] = json_path(f"{name}.amountMinor")
            out["path_currency"] = json_path(f"{name}.currency")
        else:
            out[f"path_{field}"] = json_path(name)
    return out


def presence_parameters(resource: str, fields: FieldMap | None = None) -> dict[str, list[str]]:
    """`$fields` and `$paths` of `sql/load/field_presence.sql` for one resource."""
    mapping = _mapping(resource, fields)
    return {"fields": list(mapping), "paths": [json_path(n) for n in mapping.values()]}
