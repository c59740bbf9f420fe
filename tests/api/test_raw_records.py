"""A list body read without building its records (`read_list`, issue 24): each record's text
is the provider's, its id read alone, a record parsed only when asked for; anything that
cannot be read that way is parsed whole as before."""

from __future__ import annotations

import math

import orjson
import pytest

from recon.paging.records import RawRecords, landable, loads_json, read_list

# Spaces, escapes, a long integer, multibyte text, numbers written two ways, an id twice
SENT = (
    b'{ "data" : [ {"id": "pay_1", "amountMinor": 123456789012345678901234567890},\n'
    b'  {"id":"pay_2","name":"Zo\xc3\xab \\u00e9\\/","n":1.50,"nested":{"id":"x"}} ,'
    b'{"amountMinor":5},{"id":"  "},{"id":7},{"id":"pay_2","again":true} ],'
    b' "hasMore": false, "nextOffset": 12345678901234567890123, "extra": {"a": [1]} }'
)


def test_each_record_is_the_text_sent_and_parses_as_the_whole_body_does() -> None:
    body = read_list(SENT)
    assert body is not None
    data = body["data"]
    assert isinstance(data, RawRecords)
    whole = loads_json(SENT)
    assert data == whole["data"]
    assert whole["data"] == data
    assert {k: v for k, v in body.items() if k != "data"} == {
        "hasMore": False,
        "nextOffset": 12345678901234567890123,
        "extra": {"a": [1]},
    }
    got = data.landable
    assert got.text(0) == b'{"id": "pay_1", "amountMinor": 123456789012345678901234567890}'
    second = b'{"id":"pay_2","name":"Zo\xc3\xab \\u00e9\\/","n":1.50,"nested":{"id":"x"}}'
    assert got.text(1) == second
    parsed = landable(whole["data"])  # the same records written back: the same ids and counts
    assert (got.ids, got.unkeyed, got.blank, got.id_set) == (
        parsed.ids,
        parsed.unkeyed,
        parsed.blank,
        parsed.id_set,
    )
    assert got.ids == ["pay_1", "pay_2", None, "  ", None, "pay_2"]
    assert landable(data) is got  # landing takes the text as it is


def test_records_as_a_sequence() -> None:
    body = read_list(b'{"data":[{"id":"a"},{"id":"b","n":1},{"id":"c"}]}')
    assert body is not None
    data = body["data"]
    assert len(data) == 3
    assert bool(data)
    assert data[-1] == {"id": "c"}
    assert data[1] == {"id": "b", "n": 1}
    with pytest.raises(IndexError):
        data[3]
    part = data[1:]
    assert isinstance(part, RawRecords)
    assert part == [{"id": "b", "n": 1}, {"id": "c"}]
    assert part.landable.text(0) == b'{"id":"b","n":1}'
    assert data.select([0, 2]) == [{"id": "a"}, {"id": "c"}]
    assert data[::2].landable.ids == ["a", "c"]
    assert list(data) == [{"id": "a"}, {"id": "b", "n": 1}, {"id": "c"}]
    assert data != [{"id": "a"}]
    assert data != "abc"
    empty = read_list(b'{"data":[]}')
    assert empty is not None
    assert len(empty["data"]) == 0
    assert not empty["data"]


def test_a_number_beyond_a_double_is_kept_as_sent() -> None:
    """orjson refuses 1e999 (the whole page was unreadable); read as sent, the record
    lands with its text and parses to infinity when asked for."""
    body = read_list(b'{"data":[{"id":"a","rate":1e999}]}')
    assert body is not None
    assert body["data"].landable.text(0) == b'{"id":"a","rate":1e999}'
    assert math.isinf(body["data"][0]["rate"])


@pytest.mark.parametrize(
    "content",
    [
        b'{"data":[{"id":"a"}],"note":"\xff"}',  # not UTF-8 outside the records: orjson says so
        b'{"data":[{"id":"a"},[1,2]]}',  # a record that is not an object
        b'{"data":[{"id":"a"},"text"]}',
        b'{"data":{"id":"a"}}',  # no array
        b'{"items":[]}',  # no data
        b"[]",
        b'{"data":[{"id":"a"}',  # cut
        b"",
        b'{"data":[],"hasMore":1e999}',  # an envelope value orjson cannot read
        b'{"data":[{"id":"a","x":"\\x"}]}',  # an escape JSON does not have
    ],
)
def test_what_cannot_be_read_so_is_left_to_the_whole_parse(content: bytes) -> None:
    assert read_list(content) is None


def test_the_usual_page_is_the_text_orjson_writes() -> None:
    """A provider that writes compact JSON (the sandbox) sends each record as recon wrote it
    back before: the landed text, so the warehouse, is unchanged."""
    records = [
        {"id": f"pay_{i}", "amountMinor": i * 100, "currency": "EUR", "meta": {"k": "é\u0001"}}
        for i in range(50)
    ]
    content = orjson.dumps({"data": records, "hasMore": True, "nextOffset": 50})
    body = read_list(content)
    assert body is not None
    assert body["data"].landable.raw == landable(records).raw


def test_a_record_that_is_not_utf8_is_lost_alone_not_its_page() -> None:
    """Issue 38: one bad byte inside one record (here in the second's name, and in the
    fourth's id): those records are unkeyed with their reason (landing keeps them as
    rejects), every other record of the page is read as sent."""
    records = [b'{"id":"a","n":1}', b'{"id":"b","name":"Zo\xeb"}', b'{"id":"c","n":3}']
    records.append(b'{"id":"d\xff"}')
    content = b'{"data":[' + b",".join(records) + b'],"hasMore":false,"nextOffset":null}'
    body = read_list(content)
    assert body is not None
    assert body["hasMore"] is False
    data = body["data"]
    land = data.landable
    assert land.ids == ["a", None, "c", None]
    assert land.unkeyed == 2
    assert land.problems is not None
    assert set(land.problems) == {1, 3}
    assert "not valid UTF-8 (byte 0xeb" in land.problems[1]
    assert land.text(0) == records[0]
    assert land.text(2) == records[2]
    assert data[1] == {"id": "b", "name": "Zo\ufffd"}  # readable, the byte marked
    kept = land.select([1, 2])  # the reason follows the record
    assert kept.problems == {0: land.problems[1]}
