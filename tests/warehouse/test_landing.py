"""Landing: a batch file is the commit; what was not committed is fetched again, never lost."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq
import pytest

from recon.errors import ConfigError
from recon.runid import check_run_id, new_run_id
from recon.warehouse.landing import (
    ResourceLanding,
    ResourceState,
    RunLanding,
)

RUN = "20261121T020000Z-3fa2c1"


def _page(start: int, n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"pay_{i}", "amountMinor": i, "currency": "EUR"} for i in range(start, start + n)
    ]


def _batch_rows(folder: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("batch-*.parquet")):
        rows += pq.read_table(path).to_pylist()
    return rows


def test_a_run_id_is_sortable_and_checked() -> None:
    earlier = new_run_id(datetime(2026, 11, 21, 2, 0, tzinfo=UTC))
    later = new_run_id(datetime(2026, 11, 22, 2, 0, tzinfo=UTC))
    assert earlier < later
    assert check_run_id(earlier) == earlier
    for bad in ("../etc", "20261121T020000Z", "20261121T020000Z-3FA2C1", ""):
        with pytest.raises(ConfigError) as info:
            check_run_id(bad)
        assert info.value.setting == "RUN_ID"


def test_pages_are_buffered_until_a_batch_is_full(tmp_path: Path) -> None:
    rl = ResourceLanding(tmp_path / "payments", "payments", batch_records=5)
    rl.add_page(offset=0, next_offset=3, records=_page(0, 3), request_id="req_a")
    assert not list(rl.folder.glob("batch-*.parquet"))
    assert (rl.pending_pages, rl.pending_records) == (1, 3)
    rl.add_page(offset=3, next_offset=6, records=_page(3, 3), request_id="req_b")
    assert len(list(rl.folder.glob("batch-*.parquet"))) == 1
    rows = _batch_rows(rl.folder)
    assert [r["id"] for r in rows] == [f"pay_{i}" for i in range(6)]
    assert [r["request_id"] for r in rows] == ["req_a"] * 3 + ["req_b"] * 3
    assert [r["page_offset"] for r in rows] == [0, 0, 0, 3, 3, 3]
    assert orjson.loads(rows[4]["raw"]) == _page(4, 1)[0]  # every field kept as sent
    assert rl.state.next_offset == 6
    assert (rl.state.pages, rl.state.records, rl.state.batches) == (2, 6, 1)


def test_the_batch_carries_the_state_it_commits(tmp_path: Path) -> None:
    rl = ResourceLanding(tmp_path / "payments", "payments", batch_records=2)
    rl.add_page(offset=0, next_offset=2, records=_page(0, 2), request_id="r")
    meta = pq.read_schema(rl.folder / "batch-000000.parquet").metadata
    committed = ResourceState.from_json(meta[b"recon.state"])
    assert (committed.next_offset, committed.records, committed.batches) == (2, 2, 1)
    assert ResourceState.from_json((rl.folder / "state.json").read_bytes()) == committed


def test_a_lagging_state_json_rolls_forward_from_the_newest_batch(tmp_path: Path) -> None:
    folder = tmp_path / "payments"
    rl = ResourceLanding(folder, "payments", batch_records=2)
    rl.add_page(offset=0, next_offset=2, records=_page(0, 2), request_id="r1")
    stale = (folder / "state.json").read_bytes()
    rl.add_page(offset=2, next_offset=4, records=_page(2, 2), request_id="r2")
    (folder / "state.json").write_bytes(stale)  # as if killed between batch and state.json
    reopened = ResourceLanding(folder, "payments", batch_records=2)
    assert (reopened.state.next_offset, reopened.state.batches) == (4, 2)
    assert ResourceState.from_json((folder / "state.json").read_bytes()).next_offset == 4


def test_records_that_cannot_be_keyed_go_to_rejects_with_the_reason(tmp_path: Path) -> None:
    rl = ResourceLanding(tmp_path / "disputes", "disputes", batch_records=100)
    records: list[Any] = [{"id": "dp_1"}, "text", {"no": "id"}, {"id": 7}, {"id": ""}, {"id": " "}]
    rl.add_page(offset=40, next_offset=None, records=records, request_id="req_x")
    rl.finish(status="complete", reason=None, calls=[])
    assert [r["id"] for r in _batch_rows(rl.folder)] == ["dp_1"]
    rejects = pq.read_table(rl.folder / "rejects-000000.parquet").to_pylist()
    assert [r["reason"] for r in rejects] == [
        "record is a JSON string, not an object",
        "record has no id",
        "id is a JSON number, not a string",
        "id is empty",
        "id is empty",
    ]
    assert {r["page_offset"] for r in rejects} == {40}
    assert {r["request_id"] for r in rejects} == {"req_x"}
    assert rl.state.rejects == 5


def test_rejects_of_a_flush_whose_batch_never_landed_are_dropped(tmp_path: Path) -> None:
    folder = tmp_path / "disputes"
    rl = ResourceLanding(folder, "disputes", batch_records=100)
    rl.add_page(offset=0, next_offset=2, records=[{"id": "dp_1"}, 5], request_id="r")
    rl.flush()
    # A second flush that wrote its rejects file and was killed before its batch file.
    (folder / "rejects-000001.parquet").write_bytes(
        (folder / "rejects-000000.parquet").read_bytes()
    )
    reopened = ResourceLanding(folder, "disputes")
    assert reopened.state.batches == 1
    assert sorted(p.name for p in folder.glob("rejects-*")) == ["rejects-000000.parquet"]


def test_an_integer_beyond_64_bits_is_landed_exactly(tmp_path: Path) -> None:
    rl = ResourceLanding(tmp_path / "payments", "payments", batch_records=1)
    rl.add_page(
        offset=0, next_offset=1, records=[{"id": "p", "amountMinor": 2**70}], request_id=None
    )
    (row,) = _batch_rows(rl.folder)
    assert orjson.loads(row["raw"].replace(str(2**70), "0")) == {"id": "p", "amountMinor": 0}
    assert str(2**70) in row["raw"]


def test_finish_writes_a_batch_even_for_an_empty_list(tmp_path: Path) -> None:
    rl = ResourceLanding(tmp_path / "disputes", "disputes")
    rl.add_page(offset=0, next_offset=None, records=[], request_id="r")
    rl.finish(status="complete", reason=None, calls=[])
    assert [p.name for p in rl.folder.glob("batch-*.parquet")] == ["batch-000000.parquet"]
    reopened = ResourceLanding(rl.folder, "disputes")
    assert reopened.state.done
    assert reopened.state.status == "complete"


def test_call_records_land_beside_the_batch_that_follows_them(tmp_path: Path) -> None:
    rl = ResourceLanding(tmp_path / "payments", "payments", batch_records=1)
    call = {
        "call_id": "c1",
        "resource": "payments",
        "method": "GET",
        "path": "/api/v1/payments",
        "query": "skip=0",
        "attempt": 1,
        "http_status": 200,
        "request_id": "req_1",
        "latency_ms": 3.5,
        "waited_ms": 1.25,
        "outcome": "ok",
        "at": datetime(2026, 11, 21, tzinfo=UTC),
    }
    rl.drain_calls = lambda: [call]
    rl.add_page(offset=0, next_offset=1, records=_page(0, 1), request_id="req_1")
    (calls_file,) = rl.folder.glob("calls-000000-*.parquet")
    (row,) = pq.read_table(calls_file).to_pylist()
    assert (row["request_id"], row["waited_ms"], row["error"]) == ("req_1", 1.25, None)


def test_landed_ids_are_the_newest_first_and_bounded(tmp_path: Path) -> None:
    rl = ResourceLanding(tmp_path / "payments", "payments", batch_records=2)
    for start in range(0, 6, 2):
        rl.add_page(offset=start, next_offset=start + 2, records=_page(start, 2), request_id="r")
    assert rl.landed_ids(limit=2) == ["pay_4", "pay_5"]
    assert sorted(rl.landed_ids()) == sorted(f"pay_{i}" for i in range(6))


def test_a_run_landing_knows_its_resources_and_the_newest_run(tmp_path: Path) -> None:
    root = tmp_path / "landing"
    assert RunLanding.latest(root) is None
    older = RunLanding(root, "20261120T020000Z-000001")
    older.create({"started_at": "x"})
    run = RunLanding(root, RUN)
    run.create({"started_at": "2026-11-21T02:00:00+00:00", "trigger": "test"})
    (root / "not-a-run").mkdir()
    assert RunLanding.latest(root) == RUN
    assert run.exists
    assert run.meta()["trigger"] == "test"
    rl = run.resource("refunds", batch_records=1)
    rl.add_page(offset=0, next_offset=1, records=[{"id": "re_1"}], request_id="r")
    assert set(run.states()) == {"refunds"}
    assert [p.name for p in run.files("refunds", "batch")] == ["batch-000000.parquet"]


def test_each_record_is_landed_whole_beside_multibyte_neighbours(tmp_path: Path) -> None:
    rl = ResourceLanding(tmp_path / "payments", "payments", batch_records=4)
    records = [
        {"id": "pay_é", "description": "Café crème ☕", "amountMinor": 1},
        {"id": "pay_2", "description": "", "amountMinor": 2**70},  # the stdlib's path
        {"id": "pay_3", "tags": ["日本", "🎉"], "nested": {"a": [1, {"b": None}]}},
        {"id": 7, "amountMinor": 3},  # a reject between two landed records
        {"id": "pay_4", "amountMinor": -5},
    ]
    rl.add_page(offset=0, next_offset=None, records=records, request_id="req_a")
    rl.finish(status="complete", reason=None, calls=())
    rows = _batch_rows(rl.folder)
    assert [r["id"] for r in rows] == ["pay_é", "pay_2", "pay_3", "pay_4"]
    assert [orjson.loads(r["raw"].replace(str(2**70), "0")) for r in rows] == [
        records[0],
        {**records[1], "amountMinor": 0},
        records[2],
        records[4],
    ]
    assert str(2**70) in rows[1]["raw"]
    assert (rl.state.records, rl.state.rejects) == (4, 1)
