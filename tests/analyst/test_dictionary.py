"""The data dictionary: every table, view and column of the warehouse carries a comment,
`recon describe` prints them, and docs/dictionary.md is what the warehouse says."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from recon.analyst.dictionary import (
    apply_dictionary,
    dictionary_markdown,
    entries,
    reference_warehouse,
)
from recon.cli import app

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def ref() -> duckdb.DuckDBPyConnection:
    con = reference_warehouse()
    yield con
    con.close()


def _uncommented(con: duckdb.DuckDBPyConnection) -> list[str]:
    missing = []
    for entry in entries(con):
        if not entry.comment:
            missing.append(entry.name)
        if entry.kind in ("table", "view"):
            missing += [f"{entry.name}.{c.name}" for c in entry.columns if not c.comment]
    return missing


def test_every_table_view_column_and_macro_has_a_comment(
    ref: duckdb.DuckDBPyConnection,
) -> None:
    assert _uncommented(ref) == []


def test_a_column_without_a_comment_is_caught(ref: duckdb.DuckDBPyConnection) -> None:
    con = reference_warehouse()
    con.execute("ALTER TABLE payments ADD COLUMN settled_on DATE")
    assert _uncommented(con) == ["payments.settled_on"]
    con.close()


def test_every_dictionary_line_names_an_object_that_exists(
    ref: duckdb.DuckDBPyConnection,
) -> None:
    assert apply_dictionary(ref, strict=True) == []


def test_docs_dictionary_is_generated_from_the_warehouse(ref: duckdb.DuckDBPyConnection) -> None:
    assert (DOCS / "dictionary.md").read_text() == dictionary_markdown(ref), (
        "docs/dictionary.md is stale: python -m recon.analyst.dictionary > docs/dictionary.md"
    )


def test_the_analysts_guide_links_the_dictionary_and_names_the_helpers() -> None:
    guide = (DOCS / "analysts.md").read_text()
    assert "(dictionary.md)" in guide
    for helper in (
        "counted_refunds(",
        "money(",
        "aging_bucket(",
        "open_invoices_as_of(",
        "recon describe",
    ):
        assert helper in guide, helper


@pytest.mark.integration
def test_a_published_warehouse_has_a_comment_on_every_column(analyst_db: Path) -> None:
    con = duckdb.connect(str(analyst_db), read_only=True)
    try:
        assert _uncommented(con) == []
    finally:
        con.close()


@pytest.mark.integration
def test_recon_describe_prints_the_comments(analyst_db: Path) -> None:
    listing = CliRunner().invoke(app, ["describe", "--db", str(analyst_db)])
    assert listing.exit_code == 0, listing.output
    assert "findings_current" in listing.stdout
    assert "(no comment)" not in listing.stdout
    one = CliRunner().invoke(app, ["describe", "ledger_matches", "--db", str(analyst_db)])
    assert one.exit_code == 0
    assert "provider_currency" in one.stdout
    assert "Their currency (NULL when they are in several currencies)." in one.stdout
    unknown = CliRunner().invoke(app, ["describe", "nope", "--db", str(analyst_db)])
    assert unknown.exit_code == 2
    assert unknown.stderr.strip() == (
        "recon: no table, view or macro 'nope' (`recon describe` lists them)"
    )
