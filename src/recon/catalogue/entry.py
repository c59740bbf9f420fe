"""How a catalogue entry is declared (recon.catalogue.resources holds the entries): where
the API offers a list (`ApiList`), what per-resource SQL reads of its records (`Records`,
`Status`), its table's columns (`Column`) and the entry itself (`Resource`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from recon.catalogue.models import ApiModel
from recon.paging.paginators import BasePaginator

__all__ = [
    "TRAITS",
    "ApiList",
    "Auth",
    "Column",
    "Read",
    "Records",
    "Resource",
    "Status",
    "statuses",
]

Auth = Literal["key", "bearer"]


@dataclass(frozen=True, slots=True)
class ApiList:
    """How the API offers a resource: where its list is, how it pages, how to get one."""

    path: str  # under /api/v1; `{customer_id}` for per-customer lists
    paginator: type[BasePaginator]
    model: type[ApiModel]
    # A client setting (`ClientConfig` field) whose value replaces `path`; empty there means
    # the provider does not offer the list (docs/design.md: the assumed lists).
    path_setting: str | None = None
    by_id: str | None = None  # path of one record, `{id}` quoted in, e.g. "/invoices/{id}"
    by_id_auth: Auth = "key"
    per_customer: bool = False
    # The list's own filters: argument name -> the `ClientConfig` field naming its parameter.
    filters: tuple[tuple[str, str], ...] = ()
    # When the list is not offered, records are fetched one by one (`by_id`) for the ids in
    # the file this setting names and the ids these fields of other records reference.
    ids_file_setting: str | None = None
    referenced_by: tuple[str, ...] = ()
    # ... and the ids the merchant's books name: (books input, its id field), e.g. the
    # expected invoices' `invoice_id` (issue 11: the natural source, beside the ids file).
    ids_in_books: tuple[str, str] | None = None

    @property
    def fetched_one_by_one_when_unlisted(self) -> bool:
        """True if, the list not being offered, its records are fetched by id instead."""
        sources = self.ids_file_setting or self.referenced_by or self.ids_in_books
        return self.by_id is not None and bool(sources)


@dataclass(frozen=True, slots=True)
class Status:
    """A status value a resource's records may have (lower case, as loaded)."""

    value: str
    # Final or not where "stuck in a non-final state" applies (stuck_non_final); None where
    # it does not.
    final: bool | None = None
    # The statuses a record may move to between two nights: every later state it can reach,
    # not only the next one (several steps may happen between two runs). A change not listed
    # is flagged by suspicious_changes.
    to: tuple[str, ...] = ()


def statuses(*values: str | Status) -> tuple[Status, ...]:
    """A resource's status values: a plain string is a `Status` with nothing more said."""
    return tuple(Status(v) if isinstance(v, str) else v for v in values)


@dataclass(frozen=True, slots=True)
class Records:
    """What per-resource SQL reads of a resource's table (its `live_records` rows)."""

    entity: str  # what its findings name, singular: 'payment'
    statuses: tuple[Status, ...] = ()  # empty: its status is not checked (unknown_status)
    status: str | None = "status"  # the column shown as its status (None: it has none)
    amount: str | None = "amount_minor"  # the money column, integer minor units
    currency: str | None = "currency"
    created_at: str | None = "created_at"
    # Where the amount and currency are in the raw record (dots into objects), to word a
    # value the loader could not type (impossible_amounts). `{field}` stands for the record
    # field `Settings.fields` maps `field` to, e.g. "{amount}.amountMinor".
    amount_json: str | None = "amountMinor"
    currency_json: str | None = "currency"

    @property
    def final_statuses(self) -> bool:
        """True if some of its statuses are final and some not (stuck_non_final applies)."""
        return any(s.final is not None for s in self.statuses)


Read = Literal["text", "minor", "upper", "lower", "date", "timestamp"]


@dataclass(frozen=True, slots=True)
class Column:
    """One typed column of a resource's table, and where it sits in the landed record.

    `at` is a documented path into the record (`amount.amountMinor`, read with one
    `json_transform` per record), or `{field}` for a field the spec does not show, which
    `Settings.fields` maps (bound as `$path_<field>`, recon.warehouse.fields; `{field}.amountMinor`
    and
    `{field}.currency` reach into a mapped Money object), or `@scope` for the customer a
    per-customer list was paged for. `read` says how the value becomes the column: `minor`
    (integer minor units, NULL for any other JSON type), `upper`/`lower` (codes normalised;
    raw keeps the value as sent), `date`/`timestamp` (NULL when unreadable), `text`.
    `words` are its data-dictionary entry (`recon describe`). From these the load SQL, the
    table (when no migration made it) and the dictionary's column entries are made
    (recon.warehouse.catalogue_tables).
    """

    name: str
    type: str  # DuckDB type: VARCHAR, BIGINT, DATE, TIMESTAMPTZ
    at: str
    words: str
    read: Read = "text"
    required: bool = False  # NOT NULL (a per-customer list's scope)


# What a check's `per_resource: every resource with <trait>` selects.
TRAITS = ("statuses", "final_statuses", "amount", "created_at")


@dataclass(frozen=True, slots=True)
class Resource:
    """One kind of record recon lands, loads and checks."""

    name: str  # the resource's name everywhere: landing folder, warehouse table, `requires`
    api: ApiList | None  # None: not read from the API (the merchant's books)
    nightly: bool = True  # read by every nightly run (per-customer lists only on request)
    records: Records | None = None  # what per-resource SQL reads (every API resource has it)
    # The fields the spec does not show (docs/checks.md): recon's name -> the record's field
    # (dots reach into nested objects). The defaults of `Settings.fields`; the load SQL binds
    # each as `$path_<name>` (recon.warehouse.fields).
    fields: Mapping[str, str] = field(default_factory=dict)
    # JSON paths in `raw` whose values are personal data (dots between keys): `recon export`
    # leaves out a column a query reads from one of them, or from an object holding one.
    personal: tuple[str, ...] = ()
    # The table's typed columns, in order, between `id` and the bookkeeping columns (`raw`,
    # `content_hash`, the runs that saw it): every API resource declares them (Column).
    columns: tuple[Column, ...] = ()
    words: str = ""  # the table's data-dictionary entry

    @property
    def table(self) -> str:
        """The warehouse table holding the current state of every record."""
        return self.name

    @property
    def version(self) -> tuple[str, str, str]:
        """The record_versions columns: expressions over the table for status, amount and
        currency (what "when did this change" questions ask of history)."""
        rec = self.records
        if rec is None:
            return ("NULL::VARCHAR", "NULL::BIGINT", "NULL::VARCHAR")
        return (
            rec.status if rec.status and rec.statuses else "NULL::VARCHAR",
            rec.amount or "NULL::BIGINT",
            rec.currency or "NULL::VARCHAR",
        )

    def has(self, trait: str) -> bool:
        """Whether the resource has `trait` (one of TRAITS) for per-resource checks."""
        rec = self.records
        if rec is None or trait not in TRAITS:
            return False
        return bool(getattr(rec, trait))
