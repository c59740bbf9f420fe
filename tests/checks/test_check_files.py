"""Every sql/checks file: a valid header, a known severity, the six output columns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recon.checks import (
    OUTPUT_COLUMNS,
    SEVERITIES,
    CheckDefinition,
    default_checks_dir,
    load_checks,
    parse_check,
    parse_check_text,
)
from recon.checks.definition import RESOURCES
from recon.errors import CheckDefinitionError

from .builder import ANCHOR, REPO, Wh

_SHARED = {"refund_payments", "counted_refunds"}  # read payments and refunds
CHECK_FILES = sorted((REPO / "sql" / "checks").glob("*.sql"))
# Every check file is one the runner finds and the docs list: adding a check is adding a
# file (its behaviour test and its docs/checks.md row beside it), never editing a list here.
CHECK_NAMES = {p.stem for p in CHECK_FILES}
DOCS = REPO / "docs" / "checks.md"


def test_default_checks_dir_is_the_repository_folder() -> None:
    assert default_checks_dir() == REPO / "sql" / "checks"


def test_the_runner_loads_every_check_file() -> None:
    loaded = load_checks()
    assert [c.name if isinstance(c, CheckDefinition) else c for c in loaded] == sorted(CHECK_NAMES)
    assert len(CHECK_NAMES) >= 34  # 21 on the provider's data, 13 on the books


def test_every_check_is_documented() -> None:
    """docs/checks.md lists every check (its catalogue, or the books' table it points to)."""
    docs = DOCS.read_text(encoding="utf-8") + "".join(
        (REPO / "docs" / name).read_text(encoding="utf-8") for name in ("ledger.md", "bank.md")
    )
    assert [name for name in sorted(CHECK_NAMES) if f"`{name}`" not in docs] == []


@pytest.mark.parametrize("path", CHECK_FILES, ids=lambda p: p.stem)
def test_check_file_has_a_valid_header(path: Path) -> None:
    check = parse_check(path)
    assert check.name == path.stem
    assert check.severity in SEVERITIES
    assert set(check.requires) <= set(RESOURCES)
    assert check.description
    assert "\n" not in check.description
    assert not check.sql.rstrip().endswith(";")


def test_every_check_returns_the_output_columns_on_an_empty_warehouse(wh: Wh) -> None:
    wh.run("r1")
    runs = wh.checks("r1")
    assert set(runs) == CHECK_NAMES
    for name, run in runs.items():
        assert run.status != "errored", (name, run.reason)
    for path in CHECK_FILES:
        check = parse_check(path)
        values = {
            "run_id": "r1",
            "as_of": ANCHOR,
            "stuck_days": 7,
            "volume_ratio": 0.5,
            "failed_statuses": ["failed"],
            "refund_grace_hours": 48,
        }
        bound = {k: v for k, v in values.items() if k in check.parameters}
        cur = wh.con.execute(f"SELECT * FROM ({check.sql}\n) LIMIT 0", bound)
        assert tuple(d[0] for d in cur.description or []) == OUTPUT_COLUMNS, path.stem


def test_check_files_run_as_pasted_into_the_duckdb_shell(wh: Wh) -> None:
    """With the `$param`s written as literals, each file is plain DuckDB SQL."""
    wh.run("r1")
    wh.checks("r1")  # creates the reference tables and the recon_money macro
    literals = {
        "$run_id": "'r1'",
        "$as_of": "TIMESTAMPTZ '2026-11-20 02:00:00+00'",
        "$stuck_days": "7",
        "$volume_ratio": "0.5",
        "$failed_statuses": "['failed', 'canceled', 'cancelled', 'rejected', 'reversed']",
        "$refund_grace_hours": "48",
    }
    for path in CHECK_FILES:
        text = path.read_text(encoding="utf-8")
        for name, literal in literals.items():
            text = text.replace(name, literal)
        cur = wh.con.execute(text)
        assert tuple(d[0] for d in cur.description or []) == OUTPUT_COLUMNS, path.stem
        cur.fetchall()


_READS = re.compile(
    r"\b(?:FROM|JOIN)\s+(payments|refunds|disputes|subscriptions|invoices|payment_intents|"
    r"payment_methods|refund_payments|counted_refunds)\b",
    re.IGNORECASE,
)


@pytest.mark.parametrize("path", CHECK_FILES, ids=lambda p: p.stem)
def test_every_resource_a_check_reads_is_declared(path: Path) -> None:
    """Gating and coverage rest on the header: a table read but not declared would be judged
    on last night's rows when tonight's scan of it was not complete."""
    check = parse_check(path)
    read = set()
    for name in _READS.findall(check.sql):
        read |= {"payments", "refunds"} if name in _SHARED else {name}
    assert read <= set(check.resources), sorted(read - set(check.resources))


def test_a_check_tolerates_only_what_it_reads() -> None:
    text = (REPO / "sql" / "checks" / "over_refunded.sql").read_text(encoding="utf-8")
    broken = text.replace("-- tolerates: [payments]", "-- tolerates: [invoices]")
    with pytest.raises(CheckDefinitionError, match="tolerates names invoices"):
        parse_check_text(broken, name="over_refunded")
    broken = text.replace("-- tolerates: [payments]", "-- requires_fields: [refunds.colour]")
    with pytest.raises(CheckDefinitionError, match=r"'refunds\.colour' is not a mapped field"):
        parse_check_text(broken, name="over_refunded")
    broken = text.replace("-- tolerates: [payments]", "-- finding_key: [issue_type]")
    with pytest.raises(CheckDefinitionError, match="finding_key must be"):
        parse_check_text(broken, name="over_refunded")
