"""One reader for the `--` header of checks and matching rules (recon.warehouse.sql.read_header)."""

from __future__ import annotations

import pytest

from recon.checks.definition import parse_check_text
from recon.ledger.matching import load_rules
from recon.warehouse.sql import HeaderError, read_header, sql_dir


def test_a_header_is_yaml_entries_with_their_indented_lines() -> None:
    fields, body = read_header(
        "-- name: x\n-- requires: [payments]\n-- # a comment\n-- evaluable_when: SELECT 1\n"
        "--   FROM payments\n\nSELECT 1 AS a\n-- a comment of the SQL\n"
    )
    assert fields == {
        "name": "x",
        "requires": ["payments"],
        "evaluable_when": "SELECT 1 FROM payments",
    }
    assert body == "SELECT 1 AS a\n-- a comment of the SQL"


def test_plain_keys_are_taken_as_written() -> None:
    text = "-- cardinality: 1:1\n-- description: The reference: exactly.\nSELECT 1"
    fields, _ = read_header(text, plain=frozenset({"cardinality", "description"}))
    assert fields == {"cardinality": "1:1", "description": "The reference: exactly."}
    # As YAML, `1:1` is a base-60 number and the sentence is not a value at all.
    with pytest.raises(HeaderError, match="not valid YAML"):
        read_header(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("SELECT 1", "no `--` YAML header"),
        ("-- just words\nSELECT 1", "YAML mapping"),
        ("-- name: [unclosed\nSELECT 1", "not valid YAML"),
    ],
)
def test_a_header_that_cannot_be_read_says_why(text: str, message: str) -> None:
    with pytest.raises(HeaderError, match=message):
        read_header(text)


def test_every_check_and_rule_of_the_repository_reads_with_it() -> None:
    checks = sorted((sql_dir() / "checks").glob("*.sql"))
    assert checks
    for path in checks:
        assert parse_check_text(path.read_text(encoding="utf-8"), name=path.stem).sql
    rules = load_rules()
    assert {r.cardinality for r in rules} <= {"1:1", "1:N", "N:1"}
    assert any(":" in r.description for r in rules)
