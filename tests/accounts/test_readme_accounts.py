"""docs/accounts.md (the README's former "Several merchant accounts"), followed as written: its
recon.toml (base URLs pointed
at three sandboxes), the variables it names, one night, then every query line it shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recon.accounts.night import run_group_local
from recon.cli import app
from recon.sandbox.app import SandboxConfig
from recon.sandbox.data import Dataset
from recon.sandbox.ledger.books import make_books
from recon.sandbox.ledger.files import write_books
from recon.sandbox.server import serve_in_thread

README = Path(__file__).resolve().parents[2] / "docs" / "accounts.md"
pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _section() -> str:
    text = README.read_text()
    start = text.index("# Several merchant accounts")
    return text[start : text.index("\n## ", start + 3)]


def test_the_readme_accounts_section_works_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = _section()
    toml = re.findall(r"```toml\n(.*?)```", section, flags=re.S)[0]
    names = re.findall(r"^\[accounts\.(\w+)\]$", toml, flags=re.M)
    assert names == ["eu", "us", "brand_b"]
    for var in re.findall(r'_env = "(\w+)"', toml):
        monkeypatch.setenv(var, f"secret-of-{var}")
    eu_books = tmp_path / "books" / "eu"
    written = write_books(make_books(Dataset(1, 300)), eu_books, formats=("csv",))
    written["orders"][0].rename(eu_books / "orders-2026.csv")
    with (
        serve_in_thread(
            SandboxConfig(
                seed=1,
                payments=300,
                api_key="secret-of-RECON_EU_API_KEY",
                bearer_token="secret-of-RECON_EU_BEARER_TOKEN",
            )
        ) as eu,
        serve_in_thread(
            SandboxConfig(seed=2, payments=200, api_key="secret-of-RECON_US_API_KEY")
        ) as us,
        serve_in_thread(
            SandboxConfig(seed=3, payments=100, api_key="secret-of-RECON_BRAND_B_API_KEY")
        ) as bb,
    ):
        urls = iter([eu, us, bb])
        (tmp_path / "recon.toml").write_text(
            re.sub(r'base_url = "[^"]+"', lambda _m: f'base_url = "{next(urls)}"', toml)
        )
        summary = run_group_local({})
    assert {o.account: o.exit_code for o in summary.outcomes} == {"eu": 0, "us": 0, "brand_b": 0}
    assert (tmp_path / "reports" / "group.html").exists()
    runner = CliRunner()
    commands = [
        shlex.split(line.removeprefix(".venv/bin/recon "))
        for line in re.findall(r"^\.venv/bin/recon (?:query|export) .*$", section, flags=re.M)
    ]
    assert len(commands) == 5
    for argv in commands:
        result = runner.invoke(app, argv)
        assert result.exit_code == 0, (argv, result.output)
    result = runner.invoke(app, ["query", "SELECT DISTINCT account FROM ledger_matches"])
    assert "eu" in result.stdout
