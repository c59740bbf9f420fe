"""One night, four accounts side by side: one complete, one with a poisoned record
(incomplete), one whose key is refused (failed), one where nothing listens (aborted). Each
keeps its own warehouse; the consolidated file sums them; the group page and the one alert
name every account."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import httpx
import openpyxl
import pytest
from typer.testing import CliRunner

from recon.accounts.night import run_group_local
from recon.analyst.export import open_read_only
from recon.cli import app

from .conftest import (
    Recorder,
    account_sandbox,
    closed_port_url,
    entry,
    key_of,
    set_keys,
    webhook,
    write_toml,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_one_night_every_account_its_own_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch, "eu", "us", "uk", "jp")
    monkeypatch.setenv("RECON_UK_API_KEY", "a-key-uk-does-not-know")  # refused: 401
    with (
        webhook(secret="T1/B1/group-hook") as hook,
        account_sandbox("eu", seed=3, payments=600, rate=400) as eu,
        account_sandbox("us", seed=5, payments=900, poison=("disputes:17",)) as us,
        account_sandbox("uk", seed=9, payments=300) as uk,
    ):
        monkeypatch.setenv("RECON_NOTIFY_URL", hook.url)
        write_toml(
            tmp_path / "recon.toml",
            {
                "eu": entry("eu", eu, rate_limit=300),
                "us": entry("us", us, concurrency=4),
                "uk": entry("uk", uk),
                "jp": entry("jp", closed_port_url()),  # nothing listens there
            },
        )
        from recon.night import progress

        progress.use(recorder := Recorder())  # type: ignore[arg-type]
        try:
            summary = run_group_local({})
        finally:
            progress.use(None)
        first_page = (tmp_path / "reports" / "group.html").read_text()
        first_json = (tmp_path / "reports" / "group.json").read_text()
        # The poisoned record readable again: --retry-failed finishes us's night only.
        answer = httpx.post(
            f"{us}/_sandbox/faults",
            json={"poison": []},
            headers={"x-api-key": key_of("us")},
            timeout=30,
        )
        assert answer.status_code == 200
        retried = run_group_local({}, retry_failed=True)
    by = {o.account: o for o in summary.outcomes}
    again = {o.account: o for o in retried.outcomes}
    assert (again["us"].status, again["us"].run_id) == ("complete", by["us"].run_id)
    assert (again["eu"].status, again["eu"].run_id) == ("complete", by["eu"].run_id)
    assert (again["uk"].status, again["jp"].status) == ("failed", "aborted")
    assert ("eu/payments", "complete") in recorder.done_
    assert ("us/disputes", "incomplete") in recorder.done_
    assert (by["eu"].status, by["eu"].exit_code) == ("complete", 0)
    assert (by["us"].status, by["us"].exit_code) == ("incomplete", 3)
    assert (by["jp"].status, by["jp"].exit_code) == ("aborted", 1)
    assert "cannot reach the API" in (by["jp"].reason or "")
    assert (by["uk"].status, by["uk"].exit_code) == ("failed", 1)
    assert "401" in (by["uk"].reason or ""), by["uk"].reason
    assert "(RECON_UK_API_KEY, [accounts.uk] api_key_env) was refused" in (by["uk"].reason or "")
    assert summary.exit_code == 1  # the worst account's

    # Each account its own warehouse, with its own data.
    counts = {}
    for name in ("eu", "us"):
        db = tmp_path / "data" / "accounts" / name / "recon.duckdb"
        con = duckdb.connect(str(db), read_only=True)
        counts[name] = con.execute("SELECT count(*) FROM payments").fetchone()
        con.close()
    assert counts == {"eu": (600,), "us": (900,)}

    # The consolidated warehouse: every table with an account column; totals add up.
    with open_read_only(tmp_path / "data" / "recon.duckdb") as con:
        per = dict(con.execute("SELECT account, count(*) FROM payments GROUP BY ALL").fetchall())
        assert per == {"eu": 600, "us": 900}
        total = con.execute(
            "SELECT currency, sum(amount_minor)::BIGINT FROM payments GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        findings = dict(
            con.execute("SELECT account, count(*) FROM findings GROUP BY ALL").fetchall()
        )
        views = {
            r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
        assert {
            "open_invoices",
            "findings_current",
            "payments_major",
            "runs",
            "failed_calls",
        } <= views
        assert con.execute("SELECT count(*) FROM currencies WHERE code = 'EUR'").fetchone() == (1,)
        assert con.execute(
            "SELECT count(*) FROM open_invoices WHERE account NOT IN ('eu', 'us')"
        ).fetchone() == (0,)
    expected: dict[str, int] = {}
    for name in ("eu", "us"):
        con2 = duckdb.connect(
            str(tmp_path / "data" / "accounts" / name / "recon.duckdb"), read_only=True
        )
        for cur, amount in con2.execute(
            "SELECT currency, sum(amount_minor)::BIGINT FROM payments GROUP BY ALL"
        ).fetchall():
            expected[cur] = expected.get(cur, 0) + amount
        assert con2.execute("SELECT count(*) FROM findings").fetchone() == (findings[name],)
        con2.close()
    assert dict(total) == expected

    # The group page names every account and links to each report.
    page = first_page
    for name in ("eu", "us", "uk", "jp"):
        assert f">{name}<" in page
    assert f'href="eu/{by["eu"].run_id}/report.html"' in page
    assert '<a href="eu/index.html">all runs of eu</a>' in page
    assert (tmp_path / "reports" / "eu" / "index.html").exists()
    night = summary.night_id
    when = f"{night[:4]}-{night[4:6]}-{night[6:8]} {night[9:11]}:{night[11:13]} UTC"
    assert f"<title>All accounts · night {when}: aborted</title>" in page
    assert (tmp_path / "reports" / "eu" / by["eu"].run_id / "report.html").exists()
    group = json.loads(first_json)
    assert [a["account"] for a in group["accounts"]] == ["eu", "jp", "uk", "us"]
    assert group["accounts"][3]["failed_pages"] >= 1
    eur = [
        a["amount_minor"]
        for acc in group["accounts"]
        for a in acc["amounts_at_risk"]
        if a["currency"] == "EUR"
    ]
    assert {"currency": "EUR", "amount_minor": sum(eur)}.items() <= next(
        a for a in group["amounts_at_risk"] if a["currency"] == "EUR"
    ).items()
    assert "all 4 accounts" in page

    # One alert for the night, naming every account; no account alerted on its own.
    assert len(hook.received) == 2  # the night's, then the retry's
    text = hook.received[0]["text"]
    assert text.startswith(f"recon night {summary.night_id}: aborted (exit 1)")
    assert "eu: complete (exit 0)" in text
    assert "us: incomplete (exit 3)" in text
    assert "uk: failed (exit 1)" in text
    assert "jp: aborted (exit 1)" in text

    # No secret in any file of the night.
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.name != "recon.toml":
            data = path.read_bytes()
            for secret in (b"key-of-eu", b"key-of-us", b"a-key-uk-does-not-know", b"group-hook"):
                assert secret not in data, path

    # The analysts' commands: query and export open the consolidated file by default;
    # finding commands work per account.
    runner = CliRunner()
    sql = "SELECT account, count(*) AS n FROM payments GROUP BY ALL ORDER BY ALL"
    result = runner.invoke(app, ["query", sql, "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ['"account","n"', '"eu",600', '"us",900']
    result = runner.invoke(app, ["query", "SELECT count(*) AS n FROM payments", "--account", "us"])
    assert result.exit_code == 0, result.output
    assert "900" in result.stdout
    result = runner.invoke(app, ["export", "f.csv", "--table", "findings_current"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "f.csv").read_text(encoding="utf-8-sig").startswith('"account",')
    result = runner.invoke(app, ["findings", "list"])
    assert result.exit_code == 2
    assert "--account: recon.toml has several accounts: name one (eu, jp, uk, us)" in result.output
    result = runner.invoke(app, ["findings", "list", "--account", "us", "--check", "open_invoices"])
    assert result.exit_code == 0, result.output
    assert "open_invoices:" in result.stdout
    key = result.stdout.splitlines()[1].split()[1]  # under the header row
    result = runner.invoke(app, ["findings", "ack", key, "--account", "us", "--note", "known gap"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "data" / "accounts" / "us" / "recon.acks.jsonl").exists()
    assert not (tmp_path / "data" / "accounts" / "eu" / "recon.acks.jsonl").exists()
    result = runner.invoke(app, ["report", "--account", "eu"])
    assert result.exit_code == 0, result.output
    assert f"account eu, run {by['eu'].run_id}: complete" in result.stdout
    result = runner.invoke(app, ["check"])
    assert result.exit_code == 2
    assert "name one (eu, jp, uk, us)" in result.output
    # Closing a month and the audit trail, per account (no key needed: no request is sent).
    monkeypatch.delenv("RECON_EU_API_KEY")
    month = by["eu"].run_id[:4] + "-" + by["eu"].run_id[4:6]
    result = runner.invoke(app, ["close", month, "--account", "eu"])
    assert result.exit_code == 0, result.output
    assert f"account eu: close pack {month}: draft" in result.stdout
    pack = tmp_path / "reports" / "eu" / f"close-{month}"
    cover = openpyxl.load_workbook(pack / "close.xlsx", read_only=True)["Summary"]
    assert [c.value for c in next(cover.iter_rows(min_row=2, max_row=2))] == ["account", "eu"]
    page = (pack / "close.html").read_text()
    assert '<span class="account">account eu</span> Period close' in page
    assert f"recon close {month} --account eu --sign-off" in page  # the hint works as given
    result = runner.invoke(app, ["close", month])
    assert result.exit_code == 2
    assert "name one (eu, jp, uk, us)" in result.output
    result = runner.invoke(app, ["findings", "verify", "--account", "us"])
    assert result.exit_code == 0, result.output
