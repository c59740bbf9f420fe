"""`recon findings list` never orders minor units of different currencies against each other:
the most severe and oldest first by default, `--sort amount` within a currency, and only with
the user's exchange rates (`RECON_FX_RATES`) largest first across currencies, labelled."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.warehouse.migrations import apply_migrations

NOW = datetime.now(UTC)
ROWS = [
    # key, severity, currency, amount_minor, first seen run
    ("over_refunded:pay_bhd:x", "warn", "BHD", 176_414, "r1"),  # BHD 176.414
    ("over_refunded:pay_usd:x", "error", "USD", 165_312, "r1"),  # USD 1,653.12
    ("over_refunded:pay_jpy:x", "error", "JPY", 98_489, "r0"),  # JPY 98,489
    ("over_refunded:pay_usd2:x", "info", "USD", 500, "r0"),  # USD 5.00
]


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("RECON_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "recon.duckdb"
    con = duckdb.connect(str(path))
    apply_migrations(con)
    con.execute(
        "INSERT INTO runs (run_id, started_at, status, loaded_at) VALUES "
        "('r0', ?, 'complete', ?), ('r1', ?, 'complete', ?)",
        [NOW - timedelta(days=9), NOW, NOW, NOW],
    )
    for key, severity, currency, amount, first in ROWS:
        check, eid, issue = key.split(":")
        con.execute(
            "INSERT INTO findings BY NAME SELECT 'r1' AS run_id, ? AS check_name, "
            "? AS severity, ? AS finding_key, 'open' AS state, 'payment' AS entity, "
            "? AS entity_id, ? AS currency, ? AS amount_minor, ? AS issue_type, "
            "'detail' AS detail, ? AS first_seen_run",
            [check, severity, key, eid, currency, amount, issue, first],
        )
    con.close()
    return path


def _ids(out: str) -> list[str]:
    return [line.split()[1].split(":")[1] for line in out.splitlines()[1:] if line.strip()]


def _list(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["findings", "list", "--db", str(db), *args])
    return result.exit_code, result.stdout, result.stderr


def test_by_default_the_most_severe_and_oldest_come_first(db: Path) -> None:
    code, out, _ = _list(db)
    assert code == 0
    assert _ids(out) == ["pay_jpy", "pay_usd", "pay_bhd", "pay_usd2"]


def test_amounts_are_ordered_within_each_currency(db: Path) -> None:
    code, out, _ = _list(db, "--sort", "amount")
    assert code == 0
    assert _ids(out) == ["pay_bhd", "pay_jpy", "pay_usd", "pay_usd2"]
    assert "converted" not in out


def test_largest_first_across_currencies_only_with_rates_and_labelled(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = _list(db, "--sort", "converted")
    assert code == 2
    assert "RECON_FX_RATES" in err
    (tmp_path / "rates.csv").write_text(
        "currency,rate,date\nEUR,1,2026-11-20\nUSD,0.92,2026-11-20\n"
        "JPY,0.0061,2026-11-20\nBHD,2.45,2026-11-20\n"
    )
    monkeypatch.setenv("RECON_FX_RATES", str(tmp_path / "rates.csv"))
    code, out, _ = _list(db, "--sort", "converted")
    assert code == 0, out
    # USD 1,653.12 ≈ EUR 1,520.87; JPY 98,489 ≈ EUR 600.78; BHD 176.414 ≈ EUR 432.21
    assert _ids(out) == ["pay_usd", "pay_jpy", "pay_bhd", "pay_usd2"]
    first = out.splitlines()[1]  # under the header row
    assert "USD 1,653.12 (≈ EUR 1,520.87 converted (rate of 2026-11-20))" in first


def test_a_bad_rates_file_is_a_bad_setting(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rates.csv").write_text("currency,rate,date\nUSD,0.92,2026-11-20\n")
    monkeypatch.setenv("RECON_FX_RATES", str(tmp_path / "rates.csv"))
    code, _, err = _list(db)
    assert code == 2
    assert err.strip().endswith("name the base currency once, with rate 1")
