"""A list resource's table, load and dictionary words come from its catalogue entry
(recon.warehouse.catalogue_tables): the released tables are what their entries declare, and a
made-up
resource is one entry (and its model) — no migration, load SQL or dictionary line of its own."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from recon.catalogue.models import Payment
from recon.catalogue.resources import (
    CATALOGUE,
    ApiList,
    Column,
    Records,
    Resource,
    Status,
    api_resources,
    nightly_resources,
)
from recon.checks import CheckParams, run_checks
from recon.checks.definition import parse_check
from recon.paging.paginators import OffsetPaginator
from recon.warehouse.catalogue_tables import dictionary_statements, load_select, table_sql
from recon.warehouse.dictionary import apply_dictionary
from recon.warehouse.landing import RunLanding
from recon.warehouse.load import load_run
from recon.warehouse.migrations import apply_migrations, migrations
from recon.warehouse.sql import sql_dir, sql_statements

RUN = "20261120T020000Z-000001"
_BOOKKEEPING = [
    ("raw", "JSON", False),
    ("content_hash", "VARCHAR", False),
    ("first_seen_run", "VARCHAR", False),
    ("last_seen_run", "VARCHAR", False),
    ("gone_in_run", "VARCHAR", True),
]


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str, bool]]:
    return [
        (name, kind, nullable == "YES")
        for name, kind, nullable in con.execute(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_name = ? ORDER BY ordinal_position",
            [table],
        ).fetchall()
    ]


_SPELLED = {"TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE"}  # as information_schema spells it


def _declared(entry: Resource) -> list[tuple[str, str, bool]]:
    return [
        ("id", "VARCHAR", False),
        *[(c.name, _SPELLED.get(c.type, c.type), not c.required) for c in entry.columns],
        *_BOOKKEEPING,
    ]


def test_the_released_tables_are_what_their_entries_declare() -> None:
    con = duckdb.connect()
    for stmt in sql_statements((sql_dir() / "migrate.sql").read_text(encoding="utf-8")):
        con.execute(stmt)
    for migration in migrations():  # the files alone: no table made from the catalogue
        for stmt in sql_statements(migration.path.read_text(encoding="utf-8")):
            con.execute(stmt)
    for entry in api_resources():
        assert _columns(con, entry.table) == _declared(entry), entry.name
        made = duckdb.connect()
        made.execute(table_sql(entry))
        assert _columns(made, entry.table) == _declared(entry), entry.name


def test_every_api_column_has_its_words_in_the_dictionary() -> None:
    said = "\n".join(dictionary_statements())
    for entry in api_resources():
        assert entry.words, entry.name
        for column in entry.columns:
            assert column.words, (entry.name, column.name)
            assert f"COMMENT ON COLUMN {entry.table}.{column.name} IS" in said


@pytest.fixture
def vouchers(monkeypatch: pytest.MonkeyPatch) -> Resource:
    """A list the provider might add: one catalogue entry (its model: a payment's)."""
    entry = Resource(
        "vouchers",
        ApiList("/vouchers", OffsetPaginator, Payment),
        records=Records(
            "voucher",
            (Status("issued", final=False, to=("redeemed",)), Status("redeemed", final=True)),
            amount_json="value.amountMinor",
            currency_json="value.currency",
        ),
        words="Vouchers as the provider lists them now: one row per voucher id.",
        columns=(
            Column(
                "amount_minor", "BIGINT", "value.amountMinor", "Face value, minor units.", "minor"
            ),
            Column("currency", "VARCHAR", "value.currency", "ISO 4217 code.", "upper"),
            Column("status", "VARCHAR", "state", "issued or redeemed.", "lower"),
            Column("created_at", "TIMESTAMPTZ", "issuedAt", "When it was issued.", "timestamp"),
        ),
    )
    monkeypatch.setitem(CATALOGUE, "vouchers", entry)  # type: ignore[index]
    return entry


def test_a_made_up_list_resource_is_landed_loaded_checked_and_described(
    vouchers: Resource, tmp_path: Path
) -> None:
    assert "vouchers" in [r.name for r in nightly_resources()]
    con = duckdb.connect(str(tmp_path / "wh.duckdb"))
    con.execute("SET TimeZone = 'UTC'")
    apply_migrations(con)  # no migration names it: its entry makes its table
    assert _columns(con, "vouchers") == _declared(vouchers)
    assert "json_transform" in load_select(vouchers)

    started = datetime(2026, 11, 20, 2, tzinfo=UTC)
    landing = RunLanding(tmp_path / "landing", RUN)
    landing.create({"started_at": started.isoformat()})
    records = [
        {
            "id": "vo_1",
            "value": {"amountMinor": -5, "currency": "eur"},
            "state": "ISSUED",
            "issuedAt": "2026-10-01T00:00:00Z",
        },
        {
            "id": "vo_2",
            "value": {"amountMinor": 500, "currency": "EUR"},
            "state": "lost_in_post",
            "issuedAt": "2026-11-19T00:00:00Z",
        },
    ]
    for entry in nightly_resources():
        scan = landing.resource(entry.name)
        if entry.name == "vouchers":
            scan.add_page(offset=0, next_offset=None, records=records, request_id=None)
            scan.finish(status="complete", reason=None, calls=())
        else:
            scan.finish(status="unavailable", reason="not offered (test)", calls=())
    load_run(con, landing)
    assert con.execute(
        "SELECT id, amount_minor, currency, status FROM vouchers ORDER BY id"
    ).fetchall() == [("vo_1", -5, "EUR", "issued"), ("vo_2", 500, "EUR", "lost_in_post")]

    per_resource = [
        p.stem
        for p in sorted((sql_dir() / "checks").glob("*.sql"))
        if "vouchers" in parse_check(p).per_resource
    ]
    assert {"unknown_status", "stuck_non_final", "impossible_amounts"} <= set(per_resource)
    runs = run_checks(con, run_id=RUN, as_of=started, params=CheckParams(), only=per_resource)
    for run in runs:  # a check comparing two nights (suspicious_changes) waits for the second
        assert run.status in ("passed", "failed", "not_evaluated"), run
        if run.status != "not_evaluated":
            assert "vouchers" in (run.coverage or ""), run
    assert {r.check_name for r in runs if r.status == "failed"} >= {
        "unknown_status",
        "stuck_non_final",
        "impossible_amounts",
    }
    found = set(
        con.execute("SELECT check_name, entity_id FROM findings WHERE run_id = ?", [RUN]).fetchall()
    )
    assert {("unknown_status", "vo_2"), ("stuck_non_final", "vo_1")} <= found
    assert ("impossible_amounts", "vo_1") in found

    apply_dictionary(con)
    words = con.execute(
        "SELECT comment FROM duckdb_columns() WHERE table_name = 'vouchers' "
        "AND column_name = 'amount_minor'"
    ).fetchone()
    assert words == ("Face value, minor units.",)
