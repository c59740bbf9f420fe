"""The worked recon.toml for the books in docs/books.md (the README's former section) is true:
it loads, and books laid out as it says convert exactly (Excel in major units with the shop's
statuses, a semicolon CSV with decimal commas)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from recon.config.settings import Settings, load_settings, settings_from
from recon.errors import ConfigError
from recon.ledger.loading import load_books
from recon.ledger.sources import resolve_sources

from .support import warehouse

README = Path(__file__).resolve().parents[2] / "docs" / "books.md"


def _worked_toml() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("# Reconciling against your books") :]
    return re.findall(r"```toml\n(.*?)```", section, flags=re.S)[0]


def test_the_readme_books_mapping_loads_books_laid_out_as_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "recon.toml").write_text(_worked_toml())
    monkeypatch.setenv("RECON_CONFIG", str(tmp_path / "recon.toml"))
    (tmp_path / "books").mkdir()
    pl.DataFrame(
        {
            "Order ref": ["ORD-1", "ORD-2", "ORD-3"],
            "Order no": ["1", "2", "3"],
            "Total": [12.5, 1000.0, 19.99],
            "Currency": ["EUR", "JPY", "USD"],
            "State": ["Paid", "refund issued", "void"],
            "Placed at": ["2026-11-01 10:00:00"] * 3,
        }
    ).write_excel(tmp_path / "books" / "orders-2026-11.xlsx", worksheet="Orders")
    (tmp_path / "books" / "refunds.csv").write_text(
        "Refund id;Order ref;Refunded;Currency;Refunded at\nre_1;ORD-2;1000;JPY;2026-11-02\n"
    )
    settings = load_settings()
    assert settings.ledger_grace_hours == 48
    with pytest.raises(ConfigError) as err:  # the invoices query needs its database URL
        resolve_sources(settings)
    assert str(err.value).startswith("[ledger.invoices] url: is not set")

    monkeypatch.setenv("RECON_LEDGER_DATABASE_URL", "postgresql://shop:pw@db.example/books")
    sources = resolve_sources(load_settings())
    assert [s.input for s in sources] == ["orders", "refunds", "invoices"]
    assert sources[2].describe() == "query on postgresql://***@db.example/books"

    # the two file sources alone (the invoices' database is the merchant's)
    files_only = settings_from(
        ledger={name: _table(settings, name) for name in ("orders", "refunds")}
    )
    con = warehouse(tmp_path / "recon.duckdb")
    con.execute(
        "INSERT INTO runs (run_id, started_at, status) VALUES ('r1', ?, 'complete')",
        [datetime(2026, 11, 20, tzinfo=UTC)],
    )
    load_books(con, files_only, "r1")
    assert con.execute(
        "SELECT reference, amount_minor, currency, status, books_status FROM ledger_orders "
        "ORDER BY reference"
    ).fetchall() == [
        ("ORD-1", 1250, "EUR", "confirmed", "Paid"),
        ("ORD-2", 1000, "JPY", "refunded", "refund issued"),
        ("ORD-3", 1999, "USD", "cancelled", "void"),
    ]
    assert con.execute(
        "SELECT refund_id, reference, amount_minor FROM ledger_refunds"
    ).fetchall() == [("re_1", "ORD-2", 1000)]
    assert con.execute("SELECT count(*) FROM ledger_rejects").fetchone() == (0,)


def _table(settings: Settings, name: str) -> dict[str, object]:
    return settings.ledger.table(name).model_dump(exclude_none=True)


def test_the_readme_matching_rules_load_as_they_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("# Reconciling against your books") :]
    rules = re.findall(r"```toml\n(.*?)```", section, flags=re.S)[1]
    (tmp_path / "recon.toml").write_text(rules)
    monkeypatch.setenv("RECON_CONFIG", str(tmp_path / "recon.toml"))
    settings = load_settings()
    assert (settings.ledger_tolerance_minor, settings.ledger_tolerance_bps) == (2, 10)
    assert (settings.ledger_date_window_days, settings.ledger_min_ratio) == (3, 0.5)
    assert settings.ledger.orders.sheet == "*"
    assert settings.ledger.orders.payment_reference == "Checkout ref"
    books = re.compile(str(settings.ledger.match.books_reference))
    provider = re.compile(str(settings.ledger.match.provider_reference))
    assert books.search("#ORD-1").group(1) == "ORD-1"  # type: ignore[union-attr]
    assert provider.search("cart-ORD-1").group(1) == "ORD-1"  # type: ignore[union-attr]
    assert provider.search("ORD-1").group(1) == "ORD-1"  # type: ignore[union-attr]
