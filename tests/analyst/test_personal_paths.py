"""Personal values a query derives from `raw` are recognised by where they come from (the
JSON paths the catalogue marks personal), not by the column's name; the export names them."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from recon.analyst.export import export
from recon.catalogue.resources import CATALOGUE
from recon.cli import app
from recon.warehouse.migrations import apply_migrations

RAW = (
    '{"id":"pay_1","currency":"EUR","customer":{"id":"cus_1","email":"ana@example.test"},'
    '"card":{"brand":"visa","last4":"4242","expMonth":7,"expYear":2029},'
    '"bankAccount":{"bankName":"Sandbox Bank","last4":"8003"}}'
)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    apply_migrations(con)
    con.execute(
        "INSERT INTO payments BY NAME SELECT 'pay_1' AS id, 100 AS amount_minor, 'EUR' AS "
        "currency, 'confirmed' AS status, ? AS raw, 'h' AS content_hash, 'r1' AS "
        "first_seen_run, 'r1' AS last_seen_run",
        [RAW],
    )
    con.close()
    return path


def test_the_catalogue_marks_the_personal_paths_of_payments() -> None:
    assert {"customer.email", "card.last4", "card.expMonth"} <= set(CATALOGUE["payments"].personal)


def test_columns_read_from_personal_paths_are_left_out_whatever_their_name(
    db: Path, tmp_path: Path
) -> None:
    sql = (
        "SELECT id, raw->>'$.customer.email' AS contact, raw->>'$.card.last4' AS l4, "
        "json_extract_string(raw, 'card.expMonth') AS m, raw->'card' AS c, "
        "upper(raw->>'$.customer.email') AS shout, raw->>'$.currency' AS cur, "
        "raw->>'$.bankAccount.bankName' AS bank FROM payments"
    )
    result = export(db, query=sql, out=tmp_path / "pii.csv")
    text = (tmp_path / "pii.csv").read_text(encoding="utf-8-sig")
    assert text.splitlines()[0] == '"id","cur","bank"'
    assert "4242" not in text
    assert "ana@example.test" not in text
    assert result.left_out == (
        "contact (raw $.customer.email)",
        "l4 (raw $.card.last4)",
        "m (raw card.expMonth)",
        "c (raw card)",
        "shout (raw $.customer.email)",
    )
    kept = export(db, query=sql, out=tmp_path / "all.csv", include_raw=True)
    assert kept.left_out == ()
    assert "4242" in (tmp_path / "all.csv").read_text(encoding="utf-8-sig")


def test_the_command_says_what_it_left_out(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    result = CliRunner().invoke(
        app,
        [
            "export",
            str(tmp_path / "pii.csv"),
            "--db",
            str(db),
            "--query",
            "SELECT id, raw->>'$.card.last4' AS l4 FROM payments",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "left out as personal data: l4 (raw $.card.last4) (--include-raw keeps them)" in (
        result.stderr
    )


def test_a_personal_value_named_in_a_cte_or_subquery_is_recognised(
    db: Path, tmp_path: Path
) -> None:
    sql = (
        "WITH x AS (SELECT id, raw->>'$.card.last4' AS l4 FROM payments) "
        "SELECT x.id, x.l4 AS digits, (SELECT e FROM (SELECT raw->>'$.customer.email' AS e "
        "FROM payments) LIMIT 1) AS who FROM x"
    )
    result = export(db, query=sql, out=tmp_path / "pii.csv")
    assert result.left_out == ("digits (raw $.card.last4)", "who (raw $.customer.email)")
    assert "4242" not in (tmp_path / "pii.csv").read_text(encoding="utf-8-sig")
