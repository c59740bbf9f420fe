"""`recon nightly --accept-books INPUT --account NAME --note …` with `[accounts]`: a books file
emptied on purpose is accepted for the account named, in its own audit trail, and for no
other: an account whose books went empty by accident stays incomplete, and its report says
the command that would accept them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from recon.accounts.night import (
    GroupSummary,
    finish_group,
    run_account,
    run_group_local,
)
from recon.cli import app
from recon.orchestrator import NightlyOptions
from recon.sandbox.data import Dataset
from recon.sandbox.ledger.books import make_books
from recon.sandbox.ledger.files import write_books

from .conftest import account_sandbox, entry, set_keys, write_toml

pytestmark = [pytest.mark.integration, pytest.mark.slow]


class InProcess:
    """The orchestrator the CLI loads, without Prefect: every account on this thread, then
    the night as a whole (what `pipelines.group` does with one task per account)."""

    @contextmanager
    def session(self, say: Any) -> Iterator[str]:
        yield "in process"

    def run_group(
        self,
        overrides: Mapping[str, Any],
        accounts: Sequence[str],
        night_id: str,
        options: NightlyOptions,
    ) -> GroupSummary:
        outcomes = [run_account(overrides, name, trigger="test") for name in accounts]
        return finish_group(overrides, night_id, outcomes)


def _accepts(db: Path) -> int:
    trail = db.parent / "recon.acks.jsonl"
    return trail.read_text().count('"accept_books"') if trail.exists() else 0


def test_accepting_one_accounts_emptied_books_leaves_the_others_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch, "eu", "us")
    orders: dict[str, Path] = {}
    for name, seed in (("eu", 11), ("us", 12)):
        written = write_books(make_books(Dataset(seed, 150)), tmp_path / name, formats=("csv",))
        orders[name] = written["orders"][0]
    runner = CliRunner()
    dbs = {n: tmp_path / "data" / "accounts" / n / "recon.duckdb" for n in ("eu", "us")}
    with (
        account_sandbox("eu", seed=11, payments=150) as eu,
        account_sandbox("us", seed=12, payments=150) as us,
    ):
        write_toml(
            tmp_path / "recon.toml",
            {
                name: entry(name, url, ledger={"orders": {"path": str(orders[name])}})
                for name, url in (("eu", eu), ("us", us))
            },
        )
        first = run_group_local({})
        assert [o.exit_code for o in first.outcomes] == [0, 0]
        for path in orders.values():  # both emptied: eu on purpose, us by accident
            path.write_text(path.read_text().splitlines()[0] + "\n")

        # Refused before anything is written: which account is never implied.
        result = runner.invoke(app, ["nightly", "--accept-books", "orders", "--note", "moved"])
        assert result.exit_code == 2
        assert result.output == (
            "recon: bad setting --accept-books: name the account whose books to accept: "
            "--account NAME (eu, us)\n"
        )
        result = runner.invoke(app, ["nightly", "--account", "eu"])
        assert result.exit_code == 2
        assert "--account: `recon nightly` runs every account" in result.output
        result = runner.invoke(
            app, ["nightly", "--accept-books", "orders", "--account", "fr", "--note", "moved"]
        )
        assert result.exit_code == 2
        assert "no account 'fr' in [accounts] (known: eu, us)" in result.output
        result = runner.invoke(
            app, ["nightly", "--accept-books", "refunds", "--account", "eu", "--note", "moved"]
        )
        assert result.exit_code == 2
        assert "account eu's books' refunds are not configured" in result.output
        result = runner.invoke(app, ["nightly", "--accept-books", "orders", "--account", "eu"])
        assert result.exit_code == 2
        assert "--note: must say why" in result.output
        assert (_accepts(dbs["eu"]), _accepts(dbs["us"])) == (0, 0)

        monkeypatch.setattr("recon.orchestrator.load_orchestrator", lambda: InProcess())
        result = runner.invoke(
            app,
            [
                "nightly",
                "--accept-books",
                "orders",
                "--account",
                "eu",
                "--note",
                "eu moved its orders to the new shop",
            ],
        )
    assert result.exit_code == 3, result.output  # us's books are suspect: incomplete
    assert "account eu: accepted books orders for this night (audit: " in result.output
    assert "account eu: complete (exit 0)" in result.stdout
    assert "account us: incomplete (exit 3)" in result.stdout
    assert (_accepts(dbs["eu"]), _accepts(dbs["us"])) == (1, 0)
    con = duckdb.connect(str(dbs["eu"]), read_only=True)
    (accepted,) = con.execute(
        "SELECT accepted FROM ledger_loads WHERE input = 'orders' ORDER BY loaded_at DESC LIMIT 1"
    ).fetchone() or (None,)
    con.close()
    assert "eu moved its orders to the new shop" in str(accepted)
    con = duckdb.connect(str(dbs["us"]), read_only=True)
    (reason,) = con.execute(
        "SELECT reason FROM resource_scans WHERE resource = 'ledger_orders' "
        "ORDER BY run_id DESC LIMIT 1"
    ).fetchone() or (None,)
    con.close()
    assert "recon nightly --accept-books orders --account us --note" in str(reason)
    latest = tmp_path / "reports" / "us" / "latest"
    hint = "recon nightly --accept-books orders --account us --note"
    assert hint in (latest / "report.md").read_text()
    assert hint in (latest / "report.html").read_text()
    assert "recon match --account us</code>" in (latest / "report.html").read_text()
