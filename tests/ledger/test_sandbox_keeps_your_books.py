"""`recon nightly --sandbox` reconciles the user's own books (RECON_LEDGER_*) when they are
set, and says so; without them, the sandbox's books."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.cli.run import _sandbox_books


def test_your_books_win_over_the_sandboxs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "my-orders.csv"
    mine.write_text("reference,amount_minor,currency,status,created_at\n")
    monkeypatch.setenv("RECON_LEDGER_ORDERS", str(mine))
    overrides = {"db": str(tmp_path / "data" / "recon.duckdb")}
    assert _sandbox_books(7, 200, overrides) == {}
    assert "reconciling your books (RECON_LEDGER_ORDERS), not the sandbox's" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "data" / "sandbox-books").exists()


def test_without_books_the_sandboxs_are_written_and_used(tmp_path: Path) -> None:
    overrides = {"db": str(tmp_path / "data" / "recon.duckdb")}
    books = _sandbox_books(7, 200, overrides)
    assert Path(books["ledger_orders"]).is_file()
    assert Path(books["ledger_orders"]).parent == tmp_path / "data" / "sandbox-books"
