"""A page's records as landing takes them: each record's id and its JSON text, end to end.

A list body is read without building its records (`read_list`, issue 24): msgspec finds
each record's JSON text in the body as sent and reads only its `id`, and the records stay
text (`RawRecords`) until something asks for one. Making every record a dict and writing it
back to JSON, then freeing it, was ~10% of an account-night's CPU. A body that cannot be
read that way (records that are not objects, …) is parsed whole as before,
and its records written back to JSON where the page was parsed (`landable`), while they are
still in that core's cache. The scan then deduplicates on the ids alone and landing copies
the text as it is. A body whose bad UTF-8 sits inside records loses those records alone
(unkeyed, landed as rejects with the reason, issue 38), not its page. The load hashes each
record's text made canonical (`json(raw)` in `sql/load/stage.sql`), so the same record as
sent and as written back is the same version.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import Any, cast, overload

import msgspec
import orjson

__all__ = ["Landable", "RawRecords", "json_text", "landable", "loads_json", "read_list"]

#: A JSON number of 19 digits or more (outside a string, mostly; or the whole value): orjson
#: reads an integer beyond 64 bits as a float (2**70 -> 1.18e21), a value the API never sent.
_LONG_NUMBER = re.compile(rb"(?:^|[:,\[])\s*-?[0-9]{19,}")


#: Every ASCII digit to "0", every other byte to " ": a run of 19 "0"s is where a long
#: number may be. `bytes.translate` and `in` read a page ~7x faster than the regex (which
#: took longer than orjson's parse): the regex is asked only where such a run is.
_DIGITS = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_RUN = b"0" * 19


def loads_json(content: bytes) -> Any:
    """The JSON value, every integer exactly as sent (the stdlib reads the rare long ones)."""
    if _RUN not in content.translate(_DIGITS) or _LONG_NUMBER.search(content) is None:
        return orjson.loads(content)
    return json.loads(content)


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
    # Why a record cannot be read, by position (not valid UTF-8): unkeyed, landed as a reject
    # with this reason, its text kept with U+FFFD where the bytes were
    problems: dict[int, str] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def text(self, i: int) -> bytes:
        """Record i's JSON text."""
        return self.raw[self.ends[i] : self.ends[i + 1]]

    def prints(self) -> list[int]:
        """Each record's fingerprint: the hash of its JSON text (one C call a record)."""
        raw, ends = self.raw, self.ends
        return [hash(raw[start:end]) for start, end in pairwise(ends)]

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
        problems = None
        if self.problems:
            at = self.problems
            problems = {new: at[old] for new, old in enumerate(keep) if old in at} or None
        return Landable(ids, raw, ends, ids.count(None), blank, problems=problems)


def landable(records: Sequence[Any]) -> Landable:
    """`records` (a page's `data`) as ids and JSON text: a `RawRecords`' own, else each
    parsed record written back to JSON (one flat loop, the hot path of a parsed page)."""
    if isinstance(records, RawRecords):
        return records.landable
    raw = bytearray()
    ends = array("i", [0])
    dumps, add_end = orjson.dumps, ends.append
    for rec in records:
        try:
            raw += dumps(rec)
        except TypeError:  # an integer beyond 64 bits: the stdlib can write it
            raw += json_text(rec)
        add_end(len(raw))
    ids = (rec.get("id") if type(rec) is dict else None for rec in records)
    return _keyed(ids, bytes(raw), ends)


def _keyed(
    values: Iterable[Any],
    raw: bytes,
    ends: array[int],
    problems: dict[int, str] | None = None,
) -> Landable:
    """A page's `Landable` from its records' `id` values, in order, and their text."""
    ids: list[str | None] = []
    add_id = ids.append
    unkeyed = blank = 0
    for rid in values:
        if type(rid) is str and rid:
            add_id(rid)
            if rid.isspace():
                blank += 1
        else:
            add_id(None)
            unkeyed += 1
    id_set = None
    if not unkeyed:
        id_set = frozenset(cast("list[str]", ids))
        if len(id_set) != len(ids):  # an id twice on the page
            id_set = None
    return Landable(ids, raw, ends, unkeyed, blank, id_set, problems)


class RawRecords(Sequence[Any]):
    """A list page's records as the provider sent them (`landable`: their ids and text).

    A record is parsed when it is asked for, each time (the scan and landing read the ids
    and text instead, and ask for none). Equal to a list of the same records."""

    __slots__ = ("landable",)

    def __init__(self, records: Landable) -> None:
        self.landable = records

    def __len__(self) -> int:
        return len(self.landable)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> RawRecords: ...

    def __getitem__(self, index: int | slice) -> Any:
        at = range(len(self.landable))[index]  # negative indexes, IndexError, steps
        if isinstance(at, range):
            return self.select(at)
        text = self.landable.text(at)
        try:
            return loads_json(text)
        except orjson.JSONDecodeError:  # a number beyond a double (1e999): JSON all the same
            return json.loads(text)

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self.landable)))

    def select(self, keep: Sequence[int]) -> RawRecords:
        """The records at positions `keep` (increasing)."""
        return RawRecords(self.landable.select(keep))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RawRecords | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RawRecords({list(self)!r})"


class _Keyed(msgspec.Struct):
    """A record's `id` alone: its other fields are skipped, never made into objects."""

    id: Any = None


_ENVELOPE = msgspec.json.Decoder(dict[str, msgspec.Raw])
_TEXTS = msgspec.json.Decoder(list[msgspec.Raw])
_IDS = msgspec.json.Decoder(list[_Keyed])
_ID = msgspec.json.Decoder(_Keyed)


def read_list(content: bytes) -> dict[str, Any] | None:
    """A list body, `{"data": [...], ...}`, its `data` left as sent (`RawRecords`), the
    envelope's other values parsed (a record that is not valid UTF-8 unkeyed, with its
    reason: `_read_mended`). None when it cannot be read so (not JSON, no `data` array, a
    record that is not an object, an envelope that is not UTF-8): the caller parses the body
    whole, as before, and says what is wrong with it."""
    if not content.isascii():
        try:
            content.decode()  # msgspec does not look inside the strings it skips
        except UnicodeDecodeError:
            return _read_mended(content)
    try:
        envelope = _ENVELOPE.decode(content)
        data = envelope.pop("data", None)
        if data is None:
            return None
        texts = _TEXTS.decode(data)
        keyed = _IDS.decode(data)
        body: dict[str, Any] = {key: loads_json(bytes(value)) for key, value in envelope.items()}
    except (msgspec.DecodeError, orjson.JSONDecodeError, ValueError, RecursionError):
        return None
    ends = array("i", accumulate(map(len, texts), initial=0))
    body["data"] = RawRecords(_keyed((k.id for k in keyed), b"".join(texts), ends))
    return body


def _read_mended(content: bytes) -> dict[str, Any] | None:
    """A list body that is not valid UTF-8: where the bad bytes sit inside records, those
    records alone cannot be read (unkeyed, each with its reason, landed as rejects; their
    text with U+FFFD in place of the bytes), the rest of the page is read as usual. None when
    the envelope itself is not UTF-8 or not a list body (parsed whole, an unusable body)."""
    try:
        envelope = _ENVELOPE.decode(content)
        data = envelope.pop("data", None)
        if data is None:
            return None
        body: dict[str, Any] = {key: loads_json(bytes(value)) for key, value in envelope.items()}
        texts = [bytes(text) for text in _TEXTS.decode(data)]
    except (msgspec.DecodeError, orjson.JSONDecodeError, ValueError, RecursionError):
        return None
    ids: list[Any] = []
    problems: dict[int, str] = {}
    for i, text in enumerate(texts):
        try:
            text.decode()
        except UnicodeDecodeError as exc:
            byte = text[exc.start : exc.start + 1].hex()
            problems[i] = (
                f"record is not valid UTF-8 (byte 0x{byte} at {exc.start} of its "
                f"{len(text)}); kept with U+FFFD in its place"
            )
            texts[i] = text.decode("utf-8", "replace").encode()
            ids.append(None)
            continue
        try:
            keyed = _ID.decode(text)
        except msgspec.DecodeError:  # not an object: the whole parse says so, as before
            return None
        ids.append(keyed.id)
    ends = array("i", accumulate(map(len, texts), initial=0))
    body["data"] = RawRecords(_keyed(ids, b"".join(texts), ends, problems))
    return body
