"""Loading landed runs: typed columns, versions, gone records, rejects, idempotency."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from recon.paging.records import read_list
from recon.warehouse.landing import RunLanding
from recon.warehouse.working_copy import Warehouse, load_run

PAY = {
    "id": "pay_1",
    "amountMinor": 1000,
    "currency": "EUR",
    "status": "confirmed",
    "reference": "ord-1",
    "createdAt": "2026-11-20T10:00:00Z",
    "customer": {"id": "cus_1", "email": "a@example.com"},
}
REF = {
    "id": "re_1",
    "paymentId": "pay_1",
    "amount": {"amountMinor": 250, "currency": "EUR"},
    "status": "pending",
}


def _db(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)


def test_documented_fields_are_typed_and_raw_is_kept(tmp_path: Path, land_night) -> None:
    land_night({"payments": [PAY], "refunds": [REF]})
    con = _db(tmp_path)
    row = con.execute(
        "SELECT amount_minor, currency, status, reference, created_at, raw->>'$.customer.email' "
        "FROM payments"
    ).fetchone()
    assert row == (
        1000,
        "EUR",
        "confirmed",
        "ord-1",
        datetime(2026, 11, 20, 10, tzinfo=UTC),
        "a@example.com",
    )
    assert con.execute("SELECT payment_id, amount_minor, currency FROM refunds").fetchone() == (
        "pay_1",
        250,
        "EUR",
    )
    types = dict(
        con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'payments'"
        ).fetchall()
    )
    assert types["amount_minor"] == "BIGINT"


def test_wrong_json_types_load_as_null_with_raw_intact(tmp_path: Path, land_night) -> None:
    bad = [
        {**PAY, "id": "pay_float", "amountMinor": 12.5},
        {**PAY, "id": "pay_str", "amountMinor": "1250"},
        {**PAY, "id": "pay_huge", "amountMinor": 1e20},  # what orjson makes of 10**20
    ]
    land_night({"payments": bad})
    rows = (
        _db(tmp_path)
        .execute("SELECT id, amount_minor, raw->>'$.amountMinor' FROM payments ORDER BY id")
        .fetchall()
    )
    assert rows == [
        ("pay_float", None, "12.5"),
        ("pay_huge", None, "100000000000000000000.0"),
        ("pay_str", None, "1250"),
    ]


def test_unkeyable_records_go_to_rejects_with_reason_and_request_id(
    tmp_path: Path, land_night
) -> None:
    land_night({"payments": [PAY, {"amountMinor": 5}, {"id": 7}, {"id": " "}, [1, 2]]})
    con = _db(tmp_path)
    rejects = con.execute("SELECT reason, request_id, raw FROM rejects ORDER BY reason").fetchall()
    assert rejects == [
        ("id is a JSON number, not a string", "req_page", '{"id":7}'),
        ("id is empty", "req_page", '{"id":" "}'),
        ("record has no id", "req_page", '{"amountMinor":5}'),
        ("record is a JSON array, not an object", "req_page", "[1,2]"),
    ]
    assert con.execute("SELECT records, rejects FROM resource_scans").fetchone() == (1, 4)


def test_rerun_over_unchanged_data_changes_only_run_bookkeeping(tmp_path: Path, land_night) -> None:
    land_night({"payments": [PAY], "refunds": [REF]})
    con = _db(tmp_path)
    before = con.execute("SELECT id, raw, content_hash, first_seen_run FROM payments").fetchall()
    versions = con.execute("SELECT count(*) FROM record_versions").fetchone()
    con.close()
    _, result = land_night({"payments": [PAY], "refunds": [REF]})
    con = _db(tmp_path)
    after = con.execute("SELECT id, raw, content_hash, first_seen_run FROM payments").fetchall()
    assert before == after
    assert con.execute("SELECT count(*) FROM record_versions").fetchone() == versions
    assert result.resources["payments"]["new"] == 0
    assert result.resources["payments"]["changed"] == 0


def test_changes_make_versions_and_history_answers_when(tmp_path: Path, land_night) -> None:
    first, _ = land_night({"payments": [PAY]})
    second, _ = land_night({"payments": [{**PAY, "status": "refunded"}]})
    con = _db(tmp_path)
    history = con.execute(
        "SELECT version, run_id, change, status FROM record_versions "
        "WHERE entity = 'payments' AND id = 'pay_1' ORDER BY version"
    ).fetchall()
    assert history == [(1, first, "new", "confirmed"), (2, second, "changed", "refunded")]
    became = con.execute(
        "SELECT min(run_id) FROM record_versions WHERE id = 'pay_1' AND status = 'refunded'"
    ).fetchone()
    assert became == (second,)


def test_complete_scan_marks_missing_records_gone(tmp_path: Path, land_night) -> None:
    land_night({"payments": [PAY, {**PAY, "id": "pay_2"}]})
    run2, result = land_night({"payments": [PAY]})
    con = _db(tmp_path)
    assert con.execute("SELECT id, gone_in_run FROM payments ORDER BY id").fetchall() == [
        ("pay_1", None),
        ("pay_2", run2),
    ]
    assert result.resources["payments"]["gone"] == 1


def test_incomplete_scan_never_marks_records_gone(tmp_path: Path, land_night) -> None:
    land_night({"payments": [PAY, {**PAY, "id": "pay_2"}]})
    _, result = land_night({"payments": [PAY]}, status={"payments": "incomplete"})
    con = _db(tmp_path)
    assert con.execute(
        "SELECT count(*) FROM payments WHERE gone_in_run IS NOT NULL"
    ).fetchone() == (0,)
    assert result.status == "incomplete"
    assert con.execute("SELECT status FROM runs ORDER BY started_at DESC, run_id DESC").fetchone()


def test_a_record_that_comes_back_is_live_again(tmp_path: Path, land_night) -> None:
    land_night({"payments": [PAY]})
    land_night({"payments": []})
    land_night({"payments": [PAY]})
    con = _db(tmp_path)
    assert con.execute("SELECT gone_in_run FROM payments").fetchone() == (None,)
    changes = [
        r[0]
        for r in con.execute(
            "SELECT change FROM record_versions WHERE id = 'pay_1' ORDER BY version"
        ).fetchall()
    ]
    assert changes == ["new", "gone", "returned"]


def test_call_log_lands_in_api_calls_and_failed_calls(tmp_path: Path, land_night) -> None:
    at = datetime(2026, 11, 21, 2, tzinfo=UTC)
    base = {
        "resource": "payments",
        "method": "GET",
        "path": "/api/v1/payments",
        "query": "max-records=200&skip=400",
        "latency_ms": 3.5,
        "at": at,
        "message": "try again",
    }
    calls = [
        {
            **base,
            "call_id": "c1",
            "attempt": 1,
            "http_status": 503,
            "error": "unavailable",
            "request_id": "req_a",
            "outcome": "retry",
        },
        {
            **base,
            "call_id": "c1",
            "attempt": 2,
            "http_status": 503,
            "error": "unavailable",
            "request_id": "req_b",
            "outcome": "failed",
        },
        {
            **base,
            "call_id": "c2",
            "attempt": 1,
            "http_status": 200,
            "error": None,
            "request_id": "req_c",
            "outcome": "ok",
            "message": None,
        },
    ]
    run_id, _ = land_night(
        {"payments": [PAY]}, status={"payments": "incomplete"}, calls={"payments": calls}
    )
    con = _db(tmp_path)
    assert con.execute("SELECT count(*) FROM api_calls WHERE run_id = ?", [run_id]).fetchone() == (
        3,
    )
    failed = con.execute(
        "SELECT method, path, query, http_status, error, request_id, attempts, request_ids "
        "FROM failed_calls"
    ).fetchall()
    assert failed == [
        (
            "GET",
            "/api/v1/payments",
            "max-records=200&skip=400",
            503,
            "unavailable",
            "req_b",
            2,
            ["req_a", "req_b"],
        ),
    ]


def test_loading_the_same_run_twice_is_a_no_op(tmp_path: Path, land_night) -> None:
    run_id, _ = land_night({"payments": [PAY]})
    landing = RunLanding(tmp_path / "landing", run_id)
    with Warehouse(tmp_path / "wh.duckdb").session(run_id, fresh=True, publish=True) as con:
        again = load_run(con, landing)
    assert again.skipped
    assert _db(tmp_path).execute("SELECT count(*) FROM runs").fetchone() == (1,)


def test_every_api_resource_of_the_catalogue_has_a_table_and_load_sql() -> None:
    from recon.catalogue.resources import api_resources
    from recon.warehouse.catalogue_tables import load_select
    from recon.warehouse.migrations import apply_migrations

    con = duckdb.connect()
    apply_migrations(con)
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    for entry in api_resources():
        assert entry.table in tables, entry.name
        assert "read_parquet($files)" in load_select(entry), entry.name


def test_an_id_landed_twice_loads_once_and_is_counted_as_a_duplicate(tmp_path: Path) -> None:
    from recon.runid import new_run_id

    run_id = new_run_id()
    landing = RunLanding(tmp_path / "landing", run_id)
    landing.create({"started_at": "2026-11-21T02:00:00+00:00", "trigger": "test"})
    rl = landing.resource("payments", batch_records=1)
    rl.add_page(offset=0, next_offset=1, records=[PAY], request_id="r1")
    rl.add_page(offset=5000, next_offset=5001, records=[PAY], request_id="r2")  # long after
    rl.finish(status="complete", reason=None, calls=[])
    with Warehouse(tmp_path / "wh.duckdb").session(run_id, fresh=True, publish=True) as con:
        load_run(con, landing)
    con = _db(tmp_path)
    assert con.execute("SELECT count(*) FROM payments").fetchone() == (1,)
    assert con.execute("SELECT duplicates FROM resource_scans").fetchone() == (1,)


def test_history_keeps_every_version_raw_without_storing_the_latest_twice(
    tmp_path: Path, land_night
) -> None:
    land_night({"payments": [PAY]})
    land_night({"payments": [{**PAY, "status": "refunded"}]})
    land_night({"payments": []})  # gone
    con = _db(tmp_path)
    rows = con.execute(
        "SELECT version, change, raw->>'$.status' FROM record_versions "
        "WHERE id = 'pay_1' ORDER BY version"
    ).fetchall()
    assert rows == [(1, "new", "confirmed"), (2, "changed", "refunded"), (3, "gone", None)]


def test_the_latest_version_raw_is_the_current_row(tmp_path: Path, land_night) -> None:
    land_night({"payments": [PAY]})
    con = _db(tmp_path)
    assert con.execute(
        "SELECT v.raw IS NULL, p.raw->>'$.status' FROM record_versions v JOIN payments p USING (id)"
    ).fetchone() == (True, "confirmed")


def test_a_batch_whose_state_json_never_landed_is_still_loaded(tmp_path: Path) -> None:
    from recon.runid import new_run_id

    run_id = new_run_id()
    landing = RunLanding(tmp_path / "landing", run_id)
    landing.create({"started_at": "2026-11-21T02:00:00+00:00", "trigger": "test"})
    rl = landing.resource("payments")
    rl.add_page(offset=0, next_offset=None, records=[PAY], request_id="r1")
    rl.finish(status="complete", reason=None, calls=[])
    (rl.folder / "state.json").unlink()  # killed between the batch's rename and state.json
    assert landing.states()["payments"].status == "complete"
    with Warehouse(tmp_path / "wh.duckdb").session(run_id, fresh=True, publish=True) as con:
        result = load_run(con, landing)
    assert result.status == "complete"
    assert _db(tmp_path).execute("SELECT count(*) FROM payments").fetchone() == (1,)


def test_integer_money_is_one_macro_used_by_every_stage_file() -> None:
    from recon.warehouse.sql import read_sql, sql_dir, sql_statements

    con = duckdb.connect()
    for stmt in sql_statements(read_sql("load/macros.sql")):
        con.execute(stmt)
    cases = {
        "1250": 1250,
        "-7": -7,
        "9223372036854775807": 9223372036854775807,
        "9223372036854775808": None,  # a UBIGINT beyond BIGINT
        "100000000000000000000": None,
        "12.5": None,
        '"1250"': None,
        "true": None,
        "null": None,
    }
    for text, minor in cases.items():
        got = con.execute("SELECT json_minor_units(?::JSON)", [text]).fetchone()
        assert got == (minor,), text
    assert con.execute("SELECT json_minor_units(NULL::JSON)").fetchone() == (None,)
    # The pattern lives in the macro only: no stage file spells it out again.
    for path in sorted((sql_dir() / "load").glob("*.sql")):
        text = path.read_text(encoding="utf-8")
        if path.name != "macros.sql":
            assert "UBIGINT" not in text, path.name
    from recon.catalogue.resources import resource, resources_with
    from recon.warehouse.catalogue_tables import load_select

    for name in resources_with("amount"):  # every resource with money (the catalogue's)
        assert "json_minor_units(" in load_select(resource(name)), name


def test_every_resource_loads_through_its_stage_file_and_changes_make_versions(
    tmp_path: Path, land_night
) -> None:
    from recon.catalogue.resources import api_resources

    money = {"amountMinor": 700, "currency": "eur"}
    sample = {
        "payments": {**PAY, "id": "p1"},
        "refunds": {**REF, "id": "r1"},
        "disputes": {"id": "d1", "paymentId": "p1", "amount": money, "status": "Open"},
        "subscriptions": {"id": "s1", "customerId": "c1", "priceId": "pr1", "status": "active"},
        "invoices": {"id": "i1", "customerId": "c1", "status": "open", "amountDue": money},
        "payment_intents": {"id": "pi1", "status": "succeeded", "amount": 700, "currency": "eur"},
    }
    # payment methods need the customer of the page (scope): tests/nightly loads them.
    assert set(sample) == {r.name for r in api_resources()} - {"payment_methods"}
    land_night({name: [rec] for name, rec in sample.items()})
    land_night({name: [{**rec, "note": "changed"}] for name, rec in sample.items()})
    con = _db(tmp_path)
    for entry in (r for r in api_resources() if r.name in sample):
        rows = con.execute(f"SELECT id, raw->>'$.note' FROM {entry.table}").fetchall()
        assert rows == [(sample[entry.name]["id"], "changed")], entry.name
        versions = con.execute(
            "SELECT version, change FROM record_versions WHERE entity = ? ORDER BY version",
            [entry.table],
        ).fetchall()
        assert versions == [(1, "new"), (2, "changed")], entry.name
    assert con.execute("SELECT amount_minor, currency, status FROM disputes").fetchone() == (
        700,
        "EUR",
        "open",
    )
    assert con.execute("SELECT amount_due_minor FROM invoices").fetchone() == (700,)


def test_records_read_slice_by_slice_land_exactly_once_first_landing_winning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import recon.warehouse.slices
    from recon.runid import new_run_id

    monkeypatch.setattr(recon.warehouse.slices, "SLICE_RECORDS", 3)  # slices of a few files
    run_id = new_run_id()
    landing = RunLanding(tmp_path / "landing", run_id)
    landing.create({"started_at": "2026-11-21T02:00:00+00:00", "trigger": "test"})
    rl = landing.resource("payments", batch_records=2)
    pays = [{**PAY, "id": f"pay_{i}", "amountMinor": i} for i in range(11)]
    for offset in range(0, 11, 2):
        rl.add_page(
            offset=offset, next_offset=offset + 2, records=pays[offset : offset + 2], request_id="r"
        )
    # pay_3 once more, later and different (a duplicate from beyond the scan's memory).
    rl.add_page(
        offset=50, next_offset=None, records=[{**pays[3], "amountMinor": -1}], request_id="r"
    )
    rl.finish(status="complete", reason=None, calls=[])
    assert len(landing.files("payments", "batch")) > 4
    with Warehouse(tmp_path / "wh.duckdb").session(run_id, fresh=True, publish=True) as con:
        load_run(con, landing)
    con = _db(tmp_path)
    rows = con.execute("SELECT id, amount_minor FROM payments ORDER BY amount_minor").fetchall()
    assert rows == [(f"pay_{i}", i) for i in range(11)]
    assert con.execute("SELECT count(*) FROM record_versions").fetchone() == (11,)
    assert con.execute("SELECT duplicates FROM resource_scans").fetchone() == (1,)


def test_an_insert_slice_follows_duckdbs_memory_limit() -> None:
    from recon.warehouse.slices import slice_records

    small = slice_records(duckdb.connect(config={"memory_limit": "300MB"}))
    large = slice_records(duckdb.connect(config={"memory_limit": "2GB"}))
    assert 40_000 <= small <= 80_000  # 300 MB: ~5 kB of DuckDB's memory a landed record
    assert large > 5 * small
    assert slice_records(duckdb.connect(config={"memory_limit": "1MB"})) == 20_000


def _land_pages(root: Path, pays: list[dict], status: str = "complete") -> RunLanding:
    """A run landing `pays` in batch files of two records (several slices per resource)."""
    from recon.runid import new_run_id

    landing = RunLanding(root, new_run_id())
    landing.create({"started_at": datetime.now(UTC).isoformat(), "trigger": "test"})
    rl = landing.resource("payments", batch_records=2)
    for offset in range(0, len(pays), 2):
        more = offset + 2 < len(pays)
        rl.add_page(
            offset=offset,
            next_offset=offset + 2 if more else None,
            records=pays[offset : offset + 2],
            request_id="r",
        )
    rl.finish(status=status, reason=None, calls=[])
    return landing


def _seen(db: Path) -> dict[str, tuple[str, str, str | None]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT id, first_seen_run, last_seen_run, gone_in_run FROM payments"
        ).fetchall()
    finally:
        con.close()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def test_last_seen_run_is_every_listed_rows_latest_run_night_after_night(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import recon.warehouse.slices

    monkeypatch.setattr(recon.warehouse.slices, "SLICE_RECORDS", 3)  # rows marked slice by slice
    db = tmp_path / "wh.duckdb"
    pays = [{**PAY, "id": f"pay_{i}", "amountMinor": 100 + i} for i in range(9)]

    def night(records: list[dict], status: str = "complete") -> str:
        landing = _land_pages(tmp_path / "landing", records, status)
        with Warehouse(db).session(landing.run_id, fresh=True, publish=True) as con:
            load_run(con, landing)
        return landing.run_id

    r1 = night(pays)
    # Second night: every record listed again, one changed, one new, pay_8 no longer listed.
    r2 = night([*pays[:2], {**pays[2], "status": "refunded"}, *pays[3:8], {**PAY, "id": "pay_9"}])
    seen = _seen(db)
    assert {i: s for i, s in seen.items() if i != "pay_8"} == {
        **{f"pay_{i}": (r1, r2, None) for i in range(8)},
        "pay_9": (r2, r2, None),
    }
    assert seen["pay_8"] == (r1, r1, r2)  # gone: last listed by the first night
    # Third night, incomplete: only what it listed is seen by it; nothing is gone.
    r3 = night(pays[:3], status="incomplete")
    seen = _seen(db)
    assert [seen[f"pay_{i}"][1] for i in range(10)] == [r3] * 3 + [r2] * 5 + [r1, r2]
    assert seen["pay_8"][2] == r2
    # A night listing pay_8 again: live again, seen by it.
    r4 = night([pays[8]], status="incomplete")
    assert _seen(db)["pay_8"] == (r1, r4, None)


def test_a_load_stopped_while_marking_rows_seen_finishes_without_merging_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.warehouse import database, seen
    from recon.warehouse import slices as slicing

    monkeypatch.setattr(slicing, "SLICE_RECORDS", 2)
    monkeypatch.setattr(seen, "SEEN_SCALE", 1)  # rows marked in slices of two
    db = tmp_path / "wh.duckdb"
    pays = [{**PAY, "id": f"pay_{i}", "amountMinor": 100 + i} for i in range(6)]
    first = _land_pages(tmp_path / "landing", pays)
    with Warehouse(db).session(first.run_id, fresh=True, publish=True) as con:
        load_run(con, first)
    second = _land_pages(tmp_path / "landing", [*pays[:5], {**pays[5], "status": "refunded"}])
    real = seen.mark_seen

    def killed(con: duckdb.DuckDBPyConnection, landing: RunLanding, resources: object) -> None:
        slices = slicing.slices

        def first_slice_then_stop(
            con: duckdb.DuckDBPyConnection, batches: list[str], **kwargs: int
        ) -> object:
            yield slices(con, batches, **kwargs)[0]
            raise KeyboardInterrupt  # killed after one slice committed

        monkeypatch.setattr(slicing, "slices", first_slice_then_stop)
        try:
            real(con, landing, resources)  # type: ignore[arg-type]
        finally:
            monkeypatch.setattr(slicing, "slices", slices)

    con = database.connect(tmp_path / "copy.duckdb")
    con.execute(f"ATTACH '{db}' AS pub (READ_ONLY)")
    con.execute("COPY FROM DATABASE pub TO copy")
    con.execute("DETACH pub")
    monkeypatch.setattr(seen, "mark_seen", killed)
    with pytest.raises(KeyboardInterrupt):
        load_run(con, second)
    assert con.execute(
        "SELECT loaded_at IS NULL FROM runs WHERE run_id = ?", [second.run_id]
    ).fetchone() == (True,)  # not taken as loaded: part of its rows still say the first run
    partly = con.execute(
        "SELECT count(*) FROM payments WHERE last_seen_run = ?", [second.run_id]
    ).fetchone()
    assert partly is not None
    assert 0 < partly[0] < 6
    versions = con.execute("SELECT count(*) FROM record_versions").fetchone()
    monkeypatch.setattr(seen, "mark_seen", real)
    result = load_run(con, second)
    assert not result.skipped
    assert result.resources["payments"]["changed"] == 1
    assert con.execute("SELECT count(*) FROM record_versions").fetchone() == versions
    assert con.execute(
        "SELECT count(*) FROM payments WHERE last_seen_run = ? AND first_seen_run = ?",
        [second.run_id, first.run_id],
    ).fetchone() == (6,)
    assert con.execute(
        "SELECT loaded_at IS NOT NULL FROM runs WHERE run_id = ?", [second.run_id]
    ).fetchone() == (True,)
    con.close()


def test_an_empty_list_is_not_staged_or_merged_and_still_marks_records_gone(
    tmp_path: Path,
) -> None:
    from recon.runid import new_run_id

    db = tmp_path / "wh.duckdb"

    runs: list[str] = []  # in the order they ran (two in one second sort by their suffix)

    def night(payments: list[dict], status: str = "complete") -> tuple[list[str], dict]:
        landing = RunLanding(tmp_path / "landing", new_run_id())
        runs.append(landing.run_id)
        landing.create({"started_at": datetime.now(UTC).isoformat(), "trigger": "test"})
        rl = landing.resource("payments")
        rl.add_page(offset=0, next_offset=None, records=payments, request_id="r")
        rl.finish(status=status, reason=None, calls=[])
        with Warehouse(db).session(landing.run_id, fresh=True, publish=True) as con:
            result = load_run(con, landing)
            temp = [
                str(r[0])
                for r in con.execute(
                    "SELECT table_name FROM duckdb_tables() WHERE temporary ORDER BY 1"
                ).fetchall()
            ]
        return temp, dict(result.resources["payments"])

    temp, counts = night([])  # nothing landed, nothing in the table: nothing to do
    assert "stage" not in temp
    assert "changes" not in temp
    assert counts["new"] == counts["gone"] == 0
    night([PAY, {**PAY, "id": "pay_2"}])
    temp, counts = night([], status="incomplete")  # an incomplete scan says nothing gone
    assert "changes" not in temp
    assert counts["gone"] == 0
    temp, counts = night([])  # complete and empty: every current row is gone
    assert "changes" not in temp
    assert counts["gone"] == 2
    con = _db(tmp_path)
    assert con.execute(
        "SELECT count(*) FROM payments WHERE gone_in_run IS NOT NULL"
    ).fetchone() == (2,)
    assert con.execute(
        "SELECT change, count(*) FROM record_versions GROUP BY change ORDER BY 1"
    ).fetchall() == [("gone", 2), ("new", 2)]
    assert con.execute(
        "SELECT records, present FROM field_presence WHERE field = 'created_at' AND run_id = ?",
        [runs[-1]],
    ).fetchone() == (0, 0)


def test_only_the_slices_holding_a_changed_record_are_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.warehouse import slices as slicing

    monkeypatch.setattr(slicing, "SLICE_RECORDS", 2)  # a slice per batch of two records
    db = tmp_path / "wh.duckdb"
    pays = [{**PAY, "id": f"pay_{i}", "amountMinor": 100 + i} for i in range(8)]

    class Counting:
        """The working copy's connection, counting the merge's reads of the landed records."""

        def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
            self.con, self.reads = con, 0

        def execute(self, sql: str, *args: object) -> object:
            self.reads += sql.lstrip().startswith("INSERT INTO payments BY NAME")
            return self.con.execute(sql, *args)

        def __getattr__(self, name: str) -> object:
            return getattr(self.con, name)

    def night(records: list[dict]) -> tuple[int, dict]:
        landing = _land_pages(tmp_path / "landing", records)
        with Warehouse(db).session(landing.run_id, fresh=True, publish=True) as con:
            counting = Counting(con)
            result = load_run(counting, landing)  # type: ignore[arg-type]
        return counting.reads, dict(result.resources["payments"])

    reads, counts = night(pays)
    assert (reads, counts["new"]) == (4, 8)
    reads, counts = night([*pays[:5], {**pays[5], "status": "refunded"}, *pays[6:]])
    assert (reads, counts["changed"]) == (1, 1)  # pay_5's batch only
    reads, counts = night([*pays[:5], {**pays[5], "status": "refunded"}, *pays[6:]])
    assert (reads, counts["changed"], counts["new"]) == (0, 0, 0)
    con = _db(tmp_path)
    assert con.execute("SELECT status FROM payments WHERE id = 'pay_5'").fetchone() == ("refunded",)
    assert con.execute("SELECT count(*) FROM payments").fetchone() == (8,)


def test_rows_are_marked_seen_in_slices_larger_than_the_inserts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.warehouse import seen
    from recon.warehouse import slices as slicing

    monkeypatch.setattr(slicing, "SLICE_RECORDS", 2)  # an insert slice per batch of two
    db = tmp_path / "wh.duckdb"
    pays = [{**PAY, "id": f"pay_{i}", "amountMinor": 100 + i} for i in range(16)]
    marks: list[int] = []

    class Counting:
        def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
            self.con = con

        def execute(self, sql: str, *args: object) -> object:
            if sql.lstrip().startswith("-- Every current row"):
                marks.append(1)
            return self.con.execute(sql, *args)

        def __getattr__(self, name: str) -> object:
            return getattr(self.con, name)

    runs = []
    for _night in range(2):
        marks.clear()
        landing = _land_pages(tmp_path / "landing", pays)
        with Warehouse(db).session(landing.run_id, fresh=True, publish=True) as con:
            load_run(Counting(con), landing)  # type: ignore[arg-type]
        runs.append(landing.run_id)
    assert seen.SEEN_SCALE > 1
    assert len(marks) == 16 // (2 * seen.SEEN_SCALE)  # the second night's 8 batches
    assert set(_seen(db).values()) == {(runs[0], runs[1], None)}


def test_a_record_as_sent_and_as_written_back_is_one_version(tmp_path: Path, land_night) -> None:
    """A list page lands each record's text as the provider sent it (spaces, escapes, 1.50);
    a record fetched by id lands as recon writes it back. The load hashes the canonical text,
    so the second is not a change; a changed value still is."""
    sent = read_list(
        b'{"data": [ {"id": "pay_1", "amountMinor": 1000, "currency": "EUR", '
        b'"note": "caf\\u00e9", "rate": 1.50} ]}'
    )
    assert sent is not None
    land_night({"payments": sent["data"]})
    land_night({"payments": [dict(sent["data"][0])]})  # written back: {"id":"pay_1",...}
    land_night({"payments": [{**sent["data"][0], "amountMinor": 999}]})
    con = _db(tmp_path)
    assert con.execute(
        "SELECT version, change, amount_minor FROM record_versions ORDER BY version"
    ).fetchall() == [(1, "new", 1000), (2, "changed", 999)]
    assert con.execute("SELECT raw->>'$.note' FROM payments").fetchone() == ("café",)
