"""The resource catalogue drives per-resource SQL: a resource added to it is checked by every
per-resource check, listed by `live_records` and by the test helpers, with no other list to
edit. These tests fail when a check, a SQL file or a helper keeps a resource list of its own."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from recon.catalogue import resources
from recon.catalogue.resources import (
    CATALOGUE,
    TRAITS,
    ApiList,
    Records,
    Resource,
    Status,
    nightly_resources,
    record_resources,
    resources_with,
)
from recon.checks import parse_check
from recon.config.settings import DEFAULT_FIELDS
from recon.warehouse.catalogue_views import create_catalogue_objects, live_records_sql, status_rows
from recon.warehouse.migrations import apply_migrations

from .builder import REPO, Wh

CHECK_FILES = sorted((REPO / "sql" / "checks").glob("*.sql"))
TABLES = [r.table for r in record_resources()]
_READS = re.compile(r"\b(?:FROM|JOIN)\s+(" + "|".join(TABLES) + r")\b", re.IGNORECASE)
# A check that applies to every resource reads one of these, never a resource's table.
_GENERIC = re.compile(r"\b(live_records|record_versions|resource_scans)\b")


def _header_value(path: Path, key: str) -> str | None:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"-- {key}:"):
            return line.split(":", 1)[1].strip()
    return None


PER_RESOURCE = [p for p in CHECK_FILES if parse_check(p).per_resource]


def test_every_record_resource_is_in_live_records() -> None:
    con = duckdb.connect()
    apply_migrations(con)
    create_catalogue_objects(con)
    listed = con.execute("SELECT DISTINCT resource FROM live_records").fetchall()
    assert listed == []  # empty tables; the view's branches are what matter
    sql = live_records_sql()
    assert re.findall(r"FROM (\w+)", sql) == TABLES
    assert set(TABLES) >= {r.name for r in nightly_resources()}


@pytest.mark.parametrize("path", PER_RESOURCE, ids=lambda p: p.stem)
def test_every_per_resource_check_covers_every_resource_it_applies_to(path: Path) -> None:
    """A check judged resource by resource takes its resources from the catalogue
    (`per_resource: every resource [with <trait>]`) and reads `live_records` (or history)
    instead of naming tables: so a new resource cannot be left out of it."""
    check = parse_check(path)
    header = _header_value(path, "per_resource")
    assert header is not None
    assert header.startswith("every resource"), header
    trait = header.split()[-1] if " with " in header else None
    assert check.per_resource == resources_with(trait)
    assert set(_READS.findall(check.sql)) == set(), "names resource tables: read live_records"
    assert _GENERIC.search(check.sql), "reads neither live_records nor the history"
    tolerates = _header_value(path, "tolerates")
    assert tolerates in (None, header)


def test_per_resource_checks_cover_the_resources_they_always_did() -> None:
    covered = {p.stem: parse_check(p).per_resource for p in PER_RESOURCE}
    every = {r.name for r in record_resources()}
    assert set(covered["vanished_records"]) == every
    assert set(covered["suspicious_changes"]) == every
    assert set(covered["volume_anomaly"]) == every
    assert set(covered["unknown_status"]) == every - {"payment_methods"}
    assert set(covered["impossible_amounts"]) == every - {"payment_methods", "subscriptions"}
    assert set(covered["stuck_non_final"]) >= {"payments", "refunds", "payment_intents"}


def test_no_sql_file_unions_the_resource_tables_by_hand() -> None:
    """Three or more resource tables in one file is a hand-written union: live_records is."""
    paths = [
        *sorted((REPO / "sql").glob("[!lm]*/*.sql")),  # all but load/, ledger/, migrations/
        REPO / "src" / "recon" / "checks" / "lifecycle.sql",
    ]
    unions = {}
    for path in paths:
        named = set(_READS.findall(path.read_text(encoding="utf-8")))
        if len(named) >= 3:
            unions[str(path.relative_to(REPO))] = sorted(named)
    assert unions == {}


def test_status_values_and_transitions_come_from_the_catalogue() -> None:
    rows = status_rows()
    assert {r["entity"] for r in rows["status_values"]} == set(resources_with("statuses"))
    for r in record_resources():
        assert r.records is not None
        known = {s.value for s in r.records.statuses}
        for status in r.records.statuses:
            assert set(status.to) <= known, (r.name, status.value)
    assert set(resources_with("final_statuses")) >= {"payments", "refunds", "payment_intents"}


def test_the_field_defaults_are_the_catalogues() -> None:
    assert {r.name: dict(r.fields) for r in CATALOGUE.values() if r.fields} == DEFAULT_FIELDS
    for r in record_resources():
        assert r.records is not None
        for path in (r.records.amount_json, r.records.currency_json):
            mapped = re.match(r"\{(\w+)\}", path or "")
            assert mapped is None or mapped.group(1) in r.fields, (r.name, path)
    assert set(TRAITS) == {"statuses", "final_statuses", "amount", "created_at"}


# The test helpers read the catalogue too ----------------------------------------------

# Test files whose resource lists are the sandbox's (what it serves), not recon's.
_SANDBOX_BOUND = ("tests/sandbox/", "tests/api/", "tests/ledger/support.py")
_NAMES = "|".join(TABLES)
_LIST = re.compile(rf"""(["'](?:{_NAMES})["']\s*,\s*){{4,}}["'](?:{_NAMES})["']""")


def _test_files() -> Iterator[Path]:
    for path in sorted((REPO / "tests").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if not rel.startswith(_SANDBOX_BOUND):
            yield path


def test_no_test_helper_keeps_its_own_list_of_resources() -> None:
    """Five resource names in a row is a hand copy of the catalogue (it would silently leave
    a new resource out of the tests' warehouses): read recon.catalogue.resources instead."""
    found = {
        str(p.relative_to(REPO)): m.group(0)
        for p in _test_files()
        if (m := _LIST.search(p.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_test_helpers_list_the_catalogues_resources() -> None:
    from tests.checks import builder
    from tests.night import test_resume
    from tests.reliability import conftest as reliability
    from tests.report import synthetic_warehouse

    nightly = tuple(r.name for r in nightly_resources())
    assert nightly == builder.RESOURCES
    assert nightly == synthetic_warehouse.RESOURCES
    assert nightly == reliability.TABLES
    assert nightly == test_resume.TABLES


# A made-up resource added to the catalogue is checked with no other edit --------------


@pytest.fixture
def vouchers(monkeypatch: pytest.MonkeyPatch) -> Resource:
    entry = Resource(
        "vouchers",
        ApiList("/vouchers", resources.OffsetPaginator, resources.Payment),
        records=Records(
            "voucher", (Status("issued", final=False, to=("redeemed",)), Status("redeemed", True))
        ),
        # a payment's columns but its reference: the migrations make its table from them
        columns=tuple(c for c in CATALOGUE["payments"].columns if c.name != "reference"),
    )
    monkeypatch.setattr(resources, "CATALOGUE", {**CATALOGUE, "vouchers": entry})
    return entry


def test_a_new_resource_is_covered_by_every_per_resource_check(
    vouchers: Resource, tmp_path: Path
) -> None:
    for path in PER_RESOURCE:
        assert "vouchers" in parse_check(path).per_resource, path.stem
    wh = Wh(tmp_path / "wh.duckdb")
    wh.run("r1", records={"vouchers": 2})
    wh.con.execute(
        "INSERT INTO resource_scans (run_id, resource, status, records) "
        "VALUES ('r1', 'vouchers', 'complete', 2)"
    )
    wh.con.execute(
        "INSERT INTO vouchers (id, amount_minor, currency, status, created_at, raw, "
        "content_hash, first_seen_run, last_seen_run) VALUES "
        "('vo_1', -5, 'EUR', 'issued', TIMESTAMPTZ '2026-10-01', '{}', 'h', 'r1', 'r1'), "
        "('vo_2', 5, 'EUR', 'lost_in_post', TIMESTAMPTZ '2026-11-19', '{}', 'h', 'r1', 'r1')"
    )
    runs = wh.checks("r1", only=["unknown_status", "stuck_non_final", "impossible_amounts"])
    for run in runs.values():
        assert "vouchers" in (run.coverage or ""), run
    assert ("vo_2", "unknown_status") in wh.rows("unknown_status", "r1")
    assert ("vo_1", "stuck_issued") in wh.rows("stuck_non_final", "r1")
    assert ("vo_1", "negative_amount") in wh.rows("impossible_amounts", "r1")
