"""One account of several, after its night: its report, index, summary.json and the night's
alert say which account it is; the steps that send no request (`load`, `check`, `report`
with `--account`) run without its key, and the one that does (`extract`) says which
variable is missing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import jsonschema
import pytest
from typer.testing import CliRunner

from recon.accounts.night import run_group_local
from recon.cli import app
from recon.report import SUMMARY_SCHEMA_PATH
from recon.sandbox.data import Dataset
from recon.sandbox.ledger.books import make_books
from recon.sandbox.ledger.files import write_books

from .conftest import account_sandbox, entry, set_keys, webhook, write_toml

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _href(page: str, label: str) -> str:
    found = re.search(rf'<a href="([^"]+)">{re.escape(label)}</a>', page)
    assert found, label
    return found.group(1)


def test_an_accounts_report_names_it_and_its_steps_need_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch, "eu", "us")
    books = write_books(make_books(Dataset(4, 200)), tmp_path / "books", formats=("csv",))
    with (
        webhook(secret="T9/B9/steps-hook") as hook,
        account_sandbox("eu", seed=4, payments=200) as eu,
        account_sandbox("us", seed=6, payments=150, poison=("disputes:2",)) as us,
    ):
        monkeypatch.setenv("RECON_NOTIFY_URL", hook.url)
        write_toml(
            tmp_path / "recon.toml",
            {
                "eu": entry("eu", eu, ledger={"orders": {"path": str(books["orders"][0])}}),
                "us": entry("us", us),
            },
        )
        summary = run_group_local({})
        by = {o.account: o for o in summary.outcomes}
        assert (by["eu"].exit_code, by["us"].exit_code) == (0, 3)
        runner = CliRunner()
        landed = runner.invoke(app, ["extract", "--account", "eu"])  # with its key: it calls
        assert landed.exit_code == 0, landed.output
        run_id = re.search(r"load --run (\S+)", landed.stdout)
        assert run_id is not None

    # The alert names each account, with the request ids of the calls that failed for good.
    (alert,) = hook.received
    text = alert["text"]
    us_block = text[text.index("  us: incomplete (exit 3)") :]
    assert re.search(r"\n    FAILED GET /api/v1/disputes\S* → 500 .*request_id=req_", us_block)
    assert "  eu: complete (exit 0)" in text

    # Each account's report says which account it is: title, header, banner, md, json.
    eu_dir = tmp_path / "reports" / "eu" / str(by["eu"].run_id)
    page = (eu_dir / "report.html").read_text()
    assert "<title>eu · Reconciliation Complete ·" in page
    assert '<span class="account">account eu</span> Payments reconciliation report</h1>' in page
    assert '<p class="status" id="headline">eu: run complete</p>' in page
    group_link = _href(page, "Every account (group page)")
    assert (eu_dir / group_link).resolve() == (tmp_path / "reports" / "group.html").resolve()
    assert (eu_dir / "report.md").read_text().startswith("# Account eu: reconciliation complete")
    eu_summary = json.loads((eu_dir / "summary.json").read_text())
    assert eu_summary["account"] == "eu"
    jsonschema.validate(eu_summary, json.loads(SUMMARY_SCHEMA_PATH.read_text()))
    us_dir = tmp_path / "reports" / "us" / str(by["us"].run_id)
    assert (
        '<p class="status" id="headline">us: run incomplete</p>'
        in (us_dir / "report.html").read_text()
    )
    index = (tmp_path / "reports" / "us" / "index.html").read_text()
    assert '<span class="account">account us</span> Payments reconciliation reports' in index
    index_link = _href(index, "Every account (group page)")
    assert (tmp_path / "reports" / "us" / index_link).resolve() == (
        tmp_path / "reports" / "group.html"
    ).resolve()

    # Steps that send no request: no key needed (the sandboxes are gone too).
    for var in ("RECON_EU_API_KEY", "RECON_EU_BEARER_TOKEN", "RECON_US_API_KEY"):
        monkeypatch.delenv(var)
    monkeypatch.delenv("RECON_NOTIFY_URL")
    result = runner.invoke(app, ["load", "--account", "eu", "--run", run_id.group(1)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["check", "--account", "eu"])
    assert result.exit_code == 0, result.output
    (books_check,) = [x for x in result.stdout.splitlines() if "ledger_order_missing_at" in x]
    assert books_check.split()[1] in ("passed", "failed"), books_check  # eu's books loaded
    result = runner.invoke(app, ["report", "--account", "eu"])
    assert result.exit_code == 0, result.output
    assert f"account eu, run {run_id.group(1)}: complete" in result.stdout
    assert "--account eu" in result.stdout.splitlines()[-1]  # the `query it:` line
    result = runner.invoke(app, ["report", "--account", "us"])
    assert result.exit_code == 3, result.output
    assert f"account us, run {by['us'].run_id}: incomplete" in result.stdout

    # A person's match goes to the account's books and trail, never the consolidated file's.
    eu_db = tmp_path / "data" / "accounts" / "eu" / "recon.duckdb"
    con = duckdb.connect(str(eu_db), read_only=True)
    order = (
        con.execute("SELECT min(coalesce(reference, order_id)) FROM ledger_orders").fetchone()
        or ("",)
    )[0]
    payment = (con.execute("SELECT min(id) FROM payments").fetchone() or ("",))[0]
    con.close()
    result = runner.invoke(app, ["match", order, payment, "--note", "same sale"])
    assert result.exit_code == 2
    assert result.output == (
        "recon: bad setting --account: recon.toml has several accounts: name one (eu, us)\n"
    )
    consolidated = str(tmp_path / "data" / "recon.duckdb")
    result = runner.invoke(app, ["match", order, payment, "--note", "x", "--db", consolidated])
    assert result.exit_code == 2
    assert "is the consolidated warehouse of every account: name one with --account (eu, us)" in (
        result.output
    )
    result = runner.invoke(app, ["findings", "list", "--db", consolidated])
    assert result.exit_code == 2
    assert "is the consolidated warehouse of every account: name one" in result.output
    result = runner.invoke(  # an arbitrary pair: forced past the currency and amount checks
        app, ["match", order, payment, "--note", "same sale", "--account", "eu", "--force"]
    )
    assert result.exit_code == 0, result.output
    assert '"match"' in (eu_db.parent / "recon.acks.jsonl").read_text()
    assert not (tmp_path / "data" / "recon.acks.jsonl").exists()

    # The step that calls the API: one line naming the account and the variable, exit 2.
    landing = tmp_path / "data" / "landing" / "us"
    before = sorted(landing.iterdir())
    result = runner.invoke(app, ["extract", "--account", "us"])
    assert result.exit_code == 2
    assert result.output == (
        "recon: bad setting [accounts.us] api_key_env: RECON_US_API_KEY is not set in the "
        "environment\n"
    )
    assert sorted(landing.iterdir()) == before  # nothing started for it
