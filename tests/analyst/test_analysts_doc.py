"""docs/analysts.md runs as written, and the analysts' views say what they claim."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.money.currency import currency_exponent, is_iso4217

DOC = Path(__file__).resolve().parents[2] / "docs" / "analysts.md"
QUESTIONS = re.findall(r"```sql\n(.*?)```", DOC.read_text(), flags=re.S)
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("sandbox_warehouse")]


def test_the_doc_asks_a_dozen_questions() -> None:
    assert len(QUESTIONS) >= 12


@pytest.mark.parametrize("sql", QUESTIONS, ids=lambda s: s.splitlines()[0][3:50])
def test_every_question_runs_as_written(analyst_db: Path, sql: str) -> None:
    result = CliRunner().invoke(
        app, ["query", "-", "--db", str(analyst_db), "--format", "csv"], input=sql
    )
    assert result.exit_code == 0, result.stderr


# The question 10 that summed the provider's amounts across currencies (issue 22): the rule
# below must refuse it.
SUMS_ACROSS_CURRENCIES = """
SELECT kind, books_currency, count(*) AS items,
       sum(books_amount) AS books_amount, sum(provider_amount) AS provider_amount
FROM ledger_matches_major
WHERE state = 'break'
GROUP BY ALL ORDER BY kind, books_currency
"""


def amounts_without_currency(con: duckdb.DuckDBPyConnection, sql: str) -> list[str]:
    """Every amount a query returns must sit beside the currency it is in: a DECIMAL column
    (money()) or a `*_minor` one needs `<prefix>currency` (`books_amount` ->
    `books_currency`), else `currency`, in the same result, non-NULL wherever it is set."""
    rel = con.sql(sql)
    columns = dict(zip(rel.columns, (str(t) for t in rel.types), strict=True))
    rows = rel.fetchall()
    problems = []
    for index, (name, kind) in enumerate(columns.items()):
        if not (kind.startswith("DECIMAL") or name.endswith("_minor")):
            continue
        prefix = name[: name.index("amount")] if "amount" in name else ""
        currency = next((c for c in (f"{prefix}currency", "currency") if c in columns), None)
        if currency is None:
            problems.append(f"{name}: no currency column beside it")
            continue
        at = list(columns).index(currency)
        bad = [r for r in rows if r[index] is not None and r[at] is None]
        if bad:
            problems.append(f"{name}: {len(bad)} row(s) with an amount and no {currency}")
    return problems


@pytest.mark.parametrize("sql", QUESTIONS, ids=lambda s: s.splitlines()[0][3:50])
def test_every_amount_a_question_returns_has_its_currency(analyst_db: Path, sql: str) -> None:
    con = duckdb.connect(str(analyst_db), read_only=True)
    try:
        assert amounts_without_currency(con, sql) == []
    finally:
        con.close()


def test_a_sum_across_currencies_is_caught(analyst_db: Path) -> None:
    con = duckdb.connect(str(analyst_db), read_only=True)
    try:
        assert amounts_without_currency(con, SUMS_ACROSS_CURRENCIES) == [
            "provider_amount: no currency column beside it"
        ]
    finally:
        con.close()


@pytest.fixture
def con(analyst_db: Path) -> duckdb.DuckDBPyConnection:
    c = duckdb.connect(str(analyst_db), read_only=True)
    yield c
    c.close()


def test_major_units_are_exact_for_every_money_view(con: duckdb.DuckDBPyConnection) -> None:
    rows = con.execute("SELECT amount_minor, currency, amount FROM payments_major").fetchall()
    assert rows
    for minor, currency, amount in rows:
        if minor is None or not is_iso4217(currency) or currency_exponent(currency) is None:
            assert amount is None
        else:
            assert amount == Decimal(minor).scaleb(-currency_exponent(currency))
    assert con.execute("SELECT money(1234, 'BHD'), money(5, 'XAU')").fetchone() == (
        Decimal("1.2340"),
        None,
    )
    for view, minor, major, currency in [
        ("invoices_major", "amount_due_minor", "amount_due", "currency"),
        ("ledger_orders_major", "amount_minor", "amount", "currency"),
        ("ledger_matches_major", "provider_amount_minor", "provider_amount", "provider_currency"),
    ]:
        bad = con.execute(
            f"SELECT count(*) FROM {view} v JOIN currencies c ON c.code = v.{currency} "
            f"WHERE {major} * CAST(power(10, c.exponent) AS BIGINT) <> {minor}"
        )
        assert bad.fetchone() == (0,)


def test_open_invoices_agree_with_the_open_invoices_check(con: duckdb.DuckDBPyConnection) -> None:
    view = con.execute("SELECT id, aging_bucket FROM open_invoices ORDER BY id").fetchall()
    check = con.execute(
        "SELECT entity_id, issue_type FROM findings WHERE check_name = 'open_invoices' "
        "AND run_id = (SELECT max(run_id) FROM runs) AND state IN ('new', 'open') ORDER BY 1"
    ).fetchall()
    assert view
    assert view == check
    assert {b for _, b in view} <= {"not yet due", "0-30", "31-60", "61-90", "90+"}


def test_findings_current_has_one_row_per_finding_in_its_latest_state(
    con: duckdb.DuckDBPyConnection,
) -> None:
    total, keys = con.execute(
        "SELECT count(*), count(DISTINCT finding_key) FROM findings_current"
    ).fetchone()  # type: ignore[misc]
    assert (
        total
        == keys
        == con.execute("SELECT count(DISTINCT finding_key) FROM findings").fetchone()[0]
    )  # type: ignore[index]
    latest_open = con.execute(
        "SELECT count(*) FROM findings WHERE run_id = (SELECT max(run_id) FROM runs) "
        "AND state IN ('new', 'open')"
    ).fetchone()
    assert (
        con.execute(
            "SELECT count(*) FROM findings_current WHERE state IN ('new', 'open')"
        ).fetchone()
        == latest_open
    )
    # seen on both nights: first seen on the first, last seen on the second
    first, last = con.execute("SELECT min(run_id), max(run_id) FROM runs").fetchone()  # type: ignore[misc]
    assert con.execute(
        "SELECT count(*) FROM findings_current WHERE state = 'open' "
        "AND (first_seen_run <> ? OR last_seen_run <> ? OR age_days < 0)",
        [first, last],
    ).fetchone() == (0,)


def test_night_over_night_compares_with_the_previous_complete_run(
    con: duckdb.DuckDBPyConnection,
) -> None:
    since = con.execute("SELECT DISTINCT since_run, run_id FROM night_over_night").fetchall()
    runs = [r for (r,) in con.execute("SELECT run_id FROM runs ORDER BY started_at").fetchall()]
    assert since in ([], [(runs[0], runs[1])])
    new = con.execute(
        "SELECT count(*) FROM night_over_night WHERE kind = 'finding' AND change = 'new'"
    ).fetchone()
    expected = con.execute(
        "SELECT count(*) FROM findings n WHERE n.run_id = ? AND n.state IN ('new', 'open') "
        "AND n.finding_key NOT IN (SELECT finding_key FROM findings WHERE run_id = ? "
        "AND state IN ('new', 'open'))",
        [runs[1], runs[0]],
    ).fetchone()
    assert new == expected
