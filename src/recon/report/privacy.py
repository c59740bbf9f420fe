"""Personal data stays out of every report file.

The warehouse keeps each record as received (`raw`): customer emails and names, card last4
and expiry, addresses, phone numbers. Reports never select `raw` or a personal column (every
query names its columns), but free text can still carry personal data: a check's `detail`
that quotes a field (a merchant reference made of a customer's name or email), an error
message the API echoed, a DuckDB error quoting a value. Before anything is written, that
text goes through `scrub_text` / `scrub_column`, which remove

- email addresses and card numbers (13 to 19 digits that pass the Luhn check);
- the value of any personal key written out as ``"email": "…"`` or ``last4=…``;
- the exact personal values of the record a finding is about (`personal_values`), e.g. the
  customer's name inside a reference that a check quotes.

Identifiers (`entity_id`, `finding_key`, request ids, paths) are kept: they are what an
analyst looks the record up by.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Mapping

import duckdb
import orjson
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
import pyarrow.compute as pc  # type: ignore[import-untyped,unused-ignore]

from recon.warehouse.catalogue_views import ensure_live_records
from recon.warehouse.sql import read_sql

__all__ = [
    "PERSONAL_KEYS",
    "REMOVED",
    "personal_values",
    "scrub_column",
    "scrub_table",
    "scrub_text",
]

REMOVED = "[personal data removed]"

# JSON keys whose values are personal data, spelled with `_`/`-` between the words or not
# (`first_name`, `firstName`, `first-name` all match). Matched case-insensitively.
PERSONAL_KEYS = (
    "email",
    "email_address",
    "name",
    "first_name",
    "last_name",
    "full_name",
    "given_name",
    "family_name",
    "surname",
    "cardholder_name",
    "holder_name",
    "account_holder_name",
    "billing_name",
    "phone",
    "phone_number",
    "mobile",
    "last4",
    "last_4",
    "exp_month",
    "exp_year",
    "expiry",
    "expiry_date",
    "expiration",
    "address",
    "line1",
    "line2",
    "address_line1",
    "address_line2",
    "street",
    "city",
    "postal_code",
    "postcode",
    "zip",
    "zip_code",
    "ip",
    "ip_address",
    "date_of_birth",
    "birth_date",
    "dob",
    "tax_id",
    "vat_id",
    "iban",
    "account_number",
    "ssn",
    "national_id",
)
# Shorter values are not scrubbed by value (a 2-character name would eat ordinary words);
# they are still removed where a key names them.
MIN_VALUE_LENGTH = 3

_KEYS = "|".join(
    sorted({"[_-]?".join(re.split(r"[_-]", k)) for k in PERSONAL_KEYS}, key=len, reverse=True)
)
_EMAIL = r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
_QUOTED_VALUE = r'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.]*|true|false|null'
# `"last4": "4242"` (JSON) and `last4=4242` (query strings, log-like messages); not
# `name: x`, which is how ordinary prose reads too.
_JSON_PAIR = rf'(?i)("(?:{_KEYS})"\s*:\s*)(?:{_QUOTED_VALUE})'
_PLAIN_PAIR = rf"(?i)\b((?:{_KEYS})\s*=\s*)[^\s,;&\"']+"
_CARD = r"\b(?:[0-9][ -]?){12,18}[0-9]\b"
# The string value of a personal key inside a raw record (one capture group, RE2).
_VALUE_RE2 = rf'(?i)"(?:{_KEYS})"\s*:\s*"((?:[^"\\]|\\.)*)"'

_EMAIL_RE = re.compile(_EMAIL)
_JSON_PAIR_RE = re.compile(_JSON_PAIR)
_PLAIN_PAIR_RE = re.compile(_PLAIN_PAIR)
_CARD_RE = re.compile(_CARD)
# One RE2 pattern (pyarrow) that finds the rows worth a closer look; Python does the rest.
_ANY_RE2 = "|".join(f"(?:{p})" for p in (_EMAIL, _JSON_PAIR[4:], _PLAIN_PAIR[4:], _CARD))
_ANY_RE2 = "(?i)" + _ANY_RE2
_ANY_RE = re.compile(_ANY_RE2)


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"[ -]", "", match.group(0))
    return REMOVED if 13 <= len(digits) <= 19 and _luhn_ok(digits) else match.group(0)


def scrub_text(text: str | None, values: Iterable[str] = ()) -> str | None:
    """`text` with emails, card numbers, personal key/value pairs and `values` removed."""
    if not text:
        return text
    values = [v for v in values if len(v) >= MIN_VALUE_LENGTH and v in text]
    if not values and not _ANY_RE.search(text):
        return text  # the common case: nothing that looks personal
    out = _JSON_PAIR_RE.sub(lambda m: f'{m.group(1)}"{REMOVED}"', text)
    out = _PLAIN_PAIR_RE.sub(lambda m: m.group(1) + REMOVED, out)
    out = _EMAIL_RE.sub(REMOVED, out)
    out = _CARD_RE.sub(_card, out)
    for value in sorted(set(values), key=len, reverse=True):
        # whole words only: a last4 of 7319 must not eat part of an id such as pay_7319x
        out = re.sub(rf"(?<![\w]){re.escape(value)}(?![\w])", REMOVED, out)
    return out


def scrub_column(
    column: pa.ChunkedArray | pa.Array,
    keys: pa.ChunkedArray | pa.Array | None = None,
    values: Mapping[str, list[str]] | None = None,
) -> pa.Array:
    """`column` (strings) scrubbed row by row; `values[key]` are removed from the row whose
    `keys` entry is `key`. Rows without a candidate match are not touched (checked in RE2)."""
    hits = pc.fill_null(pc.match_substring_regex(column, _ANY_RE2), False)
    rows = set(pc.indices_nonzero(hits).to_pylist())
    key_list: list[str | None] = []
    if values and keys is not None:
        key_list = keys.to_pylist()
        rows.update(i for i, k in enumerate(key_list) if k in values)
    if not rows:
        return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    texts: list[str | None] = column.to_pylist()
    for i in rows:
        extra = values.get(key_list[i] or "", []) if values and key_list else []
        texts[i] = scrub_text(texts[i], extra)
    return pa.array(texts, type=pa.string())


def scrub_table(
    table: pa.Table,
    columns: Iterable[str],
    values: Mapping[str, list[str]] | None = None,
    key: str = "finding_key",
) -> pa.Table:
    """`table` with the text `columns` scrubbed (`values` by the row's `key` column)."""
    keys = table.column(key) if values and key in table.column_names else None
    for name in columns:
        i = table.schema.get_field_index(name)
        table = table.set_column(i, name, scrub_column(table.column(name), keys, values))
    return table


#: The run's findings read against their records at a time (sql/report/personal_values.sql).
PERSONAL_BATCH = 100_000


def personal_values(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, list[str]]:
    """Per `finding_key` of the run: the personal values of the record the finding is about
    that its `detail` contains (almost always none). Only findings about a record of
    live_records (not books orders, bank lines…) have one to read; they are read a range of
    `PERSONAL_BATCH` rowids at a time."""
    ensure_live_records(con)
    entities = [e for (e,) in con.execute("SELECT DISTINCT entity FROM live_records").fetchall()]
    row = con.execute(
        "SELECT min(rowid), max(rowid) FROM findings WHERE run_id = $run_id "
        "AND detail IS NOT NULL AND list_contains($entities, entity)",
        {"run_id": run_id, "entities": entities},
    ).fetchone()
    first, last = row if row else (None, None)
    rows: list[tuple[str, str]] = []
    if first is not None and last is not None:
        sql = read_sql("report/personal_values.sql")
        for lo in range(int(first), int(last) + 1, PERSONAL_BATCH):
            params = {"run_id": run_id, "pattern": _VALUE_RE2, "min_length": MIN_VALUE_LENGTH}
            params |= {"lo": lo, "hi": lo + PERSONAL_BATCH - 1, "entities": entities}
            rows += con.execute(sql, params).fetchall()
    found: dict[str, list[str]] = {}
    for key, value in sorted(rows):
        found.setdefault(key, []).append(value)
        if "\\" in value:  # the JSON spelling was matched; the detail holds the decoded text
            with contextlib.suppress(orjson.JSONDecodeError):
                found[key].append(orjson.loads(f'"{value}"'))
    return found
