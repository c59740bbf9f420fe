"""A page's records as landing takes them: each record's id and its JSON text, end to end.

Built by the thread that parsed the page, right after the parse (`landable`), while the
page's records are still in that core's cache: written back to JSON there, the records cost
a fraction of what they cost later on the scan's thread, where landing used to do it (issue
24: the re-serialising and the id checks were ~40% of extraction's CPU at 1M payments).
The scan then deduplicates on the ids alone and landing copies the text as it is.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson

__all__ = ["Landable", "json_text", "landable"]


def json_text(record: Any) -> bytes:
    """JSON text of a record; the stdlib takes what orjson cannot (integers over 64 bits)."""
    try:
        return orjson.dumps(record)
    except TypeError:
        return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True, slots=True)
class Landable:
    """The records of a page, in order: `ids[i]` is record i's `id` when it is a non-empty
    string (None: the record cannot be keyed), its JSON text `raw[ends[i]:ends[i + 1]]`."""

    ids: list[str | None]
    raw: bytes
    ends: array[int]  # len(ids) + 1 offsets into `raw`, the first 0
    unkeyed: int  # ids that are None
    blank: int  # ids of white space only (keyed by a scan, rejected by landing)
    # The ids as a set when every record is keyed and no id is there twice, else None (the
    # usual page: a scan dedupes it with set operations, on a set made here)
    id_set: frozenset[str] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def text(self, i: int) -> bytes:
        """Record i's JSON text."""
        return self.raw[self.ends[i] : self.ends[i + 1]]

    def select(self, keep: Sequence[int]) -> Landable:
        """The records at positions `keep` (increasing)."""
        if keep and keep[-1] - keep[0] + 1 == len(keep):  # one run: one slice
            first, stop = keep[0], keep[-1] + 1
            start = self.ends[first]
            ids = self.ids[first:stop]
            raw = self.raw[start : self.ends[stop]]
            ends = array("i", [end - start for end in self.ends[first : stop + 1]])
        else:
            ids = []
            text = bytearray()
            ends = array("i", [0])
            for i in keep:
                ids.append(self.ids[i])
                text += self.raw[self.ends[i] : self.ends[i + 1]]
                ends.append(len(text))
            raw = bytes(text)
        if not (self.unkeyed or self.blank):
            return Landable(ids, raw, ends, 0, 0)
        blank = sum(1 for rid in ids if rid is not None and rid.isspace())
        return Landable(ids, raw, ends, ids.count(None), blank)


def landable(records: Sequence[Any]) -> Landable:
    """`records` (a page's parsed `data`) as ids and JSON text; one flat loop, the hot path."""
    ids: list[str | None] = []
    raw = bytearray()
    ends = array("i", [0])
    dumps, add_id, add_end = orjson.dumps, ids.append, ends.append
    unkeyed = blank = 0
    for rec in records:
        rid = rec.get("id") if type(rec) is dict else None
        if type(rid) is str and rid:
            add_id(rid)
            if rid.isspace():
                blank += 1
        else:
            add_id(None)
            unkeyed += 1
        try:
            raw += dumps(rec)
        except TypeError:  # an integer beyond 64 bits: the stdlib can write it
            raw += json_text(rec)
        add_end(len(raw))
    id_set = None
    if not unkeyed:
        id_set = frozenset(cast("list[str]", ids))
        if len(id_set) != len(ids):  # an id twice on the page
            id_set = None
    return Landable(ids, bytes(raw), ends, unkeyed, blank, id_set)
