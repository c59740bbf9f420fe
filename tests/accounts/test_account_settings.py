"""`[accounts.<name>]` in recon.toml: each account's own settings, secrets by variable name."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from recon.config.accounts import account_names, account_settings
from recon.errors import ConfigError
from recon.night.nightly import settings_for

from .conftest import entry, key_of, set_keys, write_toml


def test_without_accounts_nothing_changes(tmp_path: Path) -> None:
    (tmp_path / "recon.toml").write_text('page_size = 150\nbase_url = "http://127.0.0.1:1"\n')
    assert account_names() == []
    settings = settings_for({})
    assert settings.page_size == 150
    assert settings.db == Path("data/recon.duckdb")


def test_each_account_has_its_own_settings_paths_and_books(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch, "eu", "us")
    write_toml(
        tmp_path / "recon.toml",
        {
            "eu": entry(
                "eu",
                "https://eu.example.com",
                rate_limit=50,
                page_size=100,
                ledger={"orders": {"path": "books/eu.csv", "amounts": "major"}},
            ),
            "us": entry("us", "https://us.example.com/api/v1/"),
        },
        top="refund_grace_hours = 12\nledger_orders = 'books/shared.csv'",
    )
    assert account_names() == ["eu", "us"]
    eu = settings_for({"account": "eu"})
    us = account_settings("us", {"db": str(tmp_path / "x" / "all.duckdb")})
    assert eu.base_url == "https://eu.example.com"
    assert us.base_url == "https://us.example.com"
    assert eu.api_key is not None
    assert eu.api_key.get_secret_value() == key_of("eu")
    assert us.api_key is not None
    assert us.api_key.get_secret_value() == key_of("us")
    assert (eu.rate_limit, eu.page_size, us.rate_limit, us.page_size) == (50, 100, None, 200)
    assert eu.refund_grace_hours == us.refund_grace_hours == 12  # shared at the top level
    assert eu.db == Path("data/accounts/eu/recon.duckdb")
    assert eu.landing == Path("data/landing/eu")
    assert eu.reports == Path("reports/eu")
    assert us.db == tmp_path / "x" / "accounts" / "us" / "all.duckdb"
    assert eu.ledger.orders.path == "books/eu.csv"
    assert eu.ledger_orders is None
    assert us.ledger_orders is None
    assert us.ledger.orders.path is None
    assert eu.notify_url is None  # the night alerts once for every account


@pytest.mark.parametrize(
    ("extra", "setting", "problem"),
    [
        ({"page_size": 500}, "[accounts.eu] page_size", "less than or equal to 200"),
        ({"api_key": "sk_live_abc"}, "[accounts.eu] api_key", "a secret never goes"),
        ({"colour": "blue"}, "[accounts.eu] colour", "unknown setting"),
        ({"timezone": "UTC"}, "[accounts.eu] timezone", "whole night"),
        (
            {"api_key_env": "RECON_NOPE_KEY"},
            "[accounts.eu] api_key_env",
            "RECON_NOPE_KEY is not set",
        ),
        ({"api_key_env": "not a name"}, "[accounts.eu] api_key_env", "name of an environment"),
        ({"base_url": "ftp://x"}, "[accounts.eu] base_url", "http(s) URL"),
        ({"ledger": {"orders": {"amounts": "lots"}}}, "[accounts.eu.ledger] orders.amounts", ""),
    ],
)
def test_a_bad_account_entry_names_the_account_and_the_setting(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    extra: dict[str, object],
    setting: str,
    problem: str,
) -> None:
    set_keys(monkeypatch, "eu")
    write_toml(tmp_path / "recon.toml", {"eu": {**entry("eu", "https://eu.example.com"), **extra}})
    with pytest.raises(ConfigError) as caught:
        settings_for({"account": "eu"})
    assert caught.value.setting == setting
    assert problem in caught.value.problem
    assert "sk_live_abc" not in str(caught.value)


def test_a_bad_account_stops_the_night_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.cli import app

    set_keys(monkeypatch, "eu")
    write_toml(
        tmp_path / "recon.toml",
        {
            "eu": entry("eu", "http://127.0.0.1:9"),
            "us": entry("us", "http://127.0.0.1:9"),  # RECON_US_API_KEY is not set
        },
    )
    result = CliRunner().invoke(app, ["nightly"])
    assert result.exit_code == 2, result.output
    assert "recon: bad setting [accounts.us] api_key_env: RECON_US_API_KEY is not set" in (
        result.stderr if hasattr(result, "stderr") else result.output
    )
    assert not list(tmp_path.rglob("run.json"))  # no run started


def test_an_account_name_must_be_a_folder_and_sql_name(tmp_path: Path) -> None:
    write_toml(tmp_path / "recon.toml", {'"EU West"': entry("x", "https://x.example.com")})
    with pytest.raises(ConfigError) as caught:
        account_names()
    assert caught.value.setting == "[accounts.EU West]"


def test_two_accounts_may_not_share_a_warehouse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.accounts.night import group_preflight

    set_keys(monkeypatch, "eu", "us")
    write_toml(
        tmp_path / "recon.toml",
        {
            "eu": entry("eu", "https://eu.example.com", db="data/shared.duckdb"),
            "us": entry("us", "https://us.example.com", db="data/shared.duckdb"),
        },
    )
    with pytest.raises(ConfigError) as caught:
        group_preflight({})
    assert caught.value.setting == "[accounts.us] db"
    assert "is already account eu's" in caught.value.problem
    write_toml(
        tmp_path / "recon.toml",
        {"eu": entry("eu", "https://eu.example.com", db="data/recon.duckdb")},
    )
    with pytest.raises(ConfigError, match="consolidated warehouse"):
        group_preflight({})


def test_a_missing_books_file_is_said_as_the_accounts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.accounts.night import group_preflight

    set_keys(monkeypatch, "eu")
    write_toml(
        tmp_path / "recon.toml",
        {"eu": entry("eu", "https://eu.example.com", ledger={"orders": {"path": "books/*.csv"}})},
    )
    with pytest.raises(ConfigError) as caught:
        group_preflight({})
    assert caught.value.setting == "[accounts.eu.ledger.orders] path"
    assert "no file matches 'books/*.csv'" in caught.value.problem


def test_the_night_exits_with_its_worst_accounts_code() -> None:
    from recon.accounts.night import worst_exit_code

    assert worst_exit_code([0, 0]) == 0
    assert worst_exit_code([0, 4, 3]) == 3
    assert worst_exit_code([3, 1, 4]) == 1
    assert worst_exit_code([1, 2]) == 2
    assert worst_exit_code([]) == 0


def test_single_account_setting_names_become_the_accounts() -> None:
    from recon.config.accounts import in_account

    said = {
        "RECON_PAGE_SIZE": "[accounts.eu] page_size",
        "[ledger.refunds] path": "[accounts.eu.ledger.refunds] path",
        "--resume": "[accounts.eu] --resume",
        "[accounts.eu] db": "[accounts.eu] db",
    }
    for setting, expected in said.items():
        assert in_account("eu", ConfigError(setting, "x")).setting == expected


def test_a_step_that_sends_no_request_needs_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`recon check/report --account` read the warehouse only: no secret of the account is
    read; `recon load` reads the books, so their database URL is, but never the API key."""
    write_toml(
        tmp_path / "recon.toml",
        {"eu": entry("eu", "https://eu.example.com", ledger_database_url_env="RECON_EU_BOOKS")},
    )
    with pytest.raises(ConfigError) as caught:  # a step that calls the API
        settings_for({"account": "eu"})
    assert caught.value.setting == "[accounts.eu] api_key_env"
    assert "RECON_EU_API_KEY is not set" in caught.value.problem
    quiet = settings_for({"account": "eu", "offline": "warehouse"})
    assert (quiet.api_key, quiet.ledger_database_url) == (None, None)
    assert quiet.db == Path("data/accounts/eu/recon.duckdb")
    with pytest.raises(ConfigError) as caught:  # the books' database is read by a load
        settings_for({"account": "eu", "offline": "books"})
    assert caught.value.setting == "[accounts.eu] ledger_database_url_env"
    assert "RECON_EU_BOOKS is not set" in caught.value.problem
    monkeypatch.setenv("RECON_EU_BOOKS", "postgresql://u:hunter2-eu@db/books")
    books = settings_for({"account": "eu", "offline": "books"})
    assert books.api_key is None
    assert books.ledger_database_url is not None
    with pytest.raises(ConfigError, match="offline"):
        settings_for({"account": "eu", "offline": "yes"})


def test_an_accounts_secrets_are_scrubbed_from_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.errors import scrub

    set_keys(monkeypatch, "eu")
    write_toml(tmp_path / "recon.toml", {"eu": entry("eu", "https://eu.example.com")})
    settings_for({"account": "eu"})
    assert scrub(f"refused key {key_of('eu')}!") == "refused key ***!"


def test_the_group_alert_and_page_never_show_an_accounts_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.accounts.night import AccountOutcome, GroupSummary, group_alert
    from recon.accounts.report import render_group_page

    set_keys(monkeypatch, "eu")
    write_toml(tmp_path / "recon.toml", {"eu": entry("eu", "https://eu.example.com")})
    settings_for({"account": "eu"})  # its key read, so known to be a secret
    leak = f"ValueError: bad header x-api-key={key_of('eu')}"
    summary = GroupSummary(
        "20261125T020000Z-abcdef", [AccountOutcome("eu", "aborted", 1, reason=leak)], 1
    )
    assert key_of("eu") not in group_alert(summary).text()
    page = render_group_page(tmp_path / "reports", summary)
    assert key_of("eu") not in page.read_text()
    assert key_of("eu") not in (tmp_path / "reports" / "group.json").read_text()
    assert "ValueError: bad header" in page.read_text()
