"""`recon close 2026-10` on a warehouse whose nights straddle the period: the roll-forward
ties per currency and check family, each figure is the sum of the findings listed, the pack
opens with openpyxl and its totals equal a direct query; sign-off freezes the period,
--reopen is audited, an incomplete night needs --accept-incomplete."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import openpyxl
import orjson
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.close import compute_period, parse_period
from recon.findings.acks import AckLog, acks_path

from .conftest import FINDINGS, N01, O01, O15, O31, S30, build


def _close(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["close", *args])
    return result.exit_code, result.stdout, result.stderr


def _figures(db: Path):  # type: ignore[no-untyped-def]
    con = duckdb.connect(str(db), read_only=True)
    try:
        return compute_period(con, parse_period("2026-10"), acks_path(db))
    finally:
        con.close()


def test_the_roll_forward_ties_per_currency_and_family(db: Path) -> None:
    fig = _figures(db)
    assert [(r.run_id, r.step) for r in fig.runs] == [(S30, 0), (O01, 1), (O15, 2), (O31, 3)]
    rows = {(r["family"], r["currency"]): r for r in fig.rollforward.to_pylist()}
    assert all(r["ties"] for r in rows.values())
    # refunds EUR: pay_a open throughout (100 -> 120), pay_b resolved on the 1st, ref_g in
    # EUR from the 1st to the 15th (then USD)
    assert {k: rows[("refunds", "EUR")][k] for k in (
        "open_start_count", "open_start_minor", "new_count", "new_minor", "resolved_count",
        "resolved_minor", "change_minor", "open_end_count", "open_end_minor")} == {
        "open_start_count": 2, "open_start_minor": 140, "new_count": 1, "new_minor": 50,
        "resolved_count": 2, "resolved_minor": 90, "change_minor": 20,
        "open_end_count": 1, "open_end_minor": 120,
    }  # fmt: skip
    # invoices: inv_f opens on the 1st, resolves on the 15th, opens again on the 31st
    inv = rows[("invoices", "EUR")]
    assert (inv["new_count"], inv["resolved_count"], inv["open_end_minor"]) == (2, 1, 300)
    # ORD-E opens on 1 November: not in October
    assert "ledger_amount_mismatch:ORD-E:provider_short" not in set(
        fig.rollforward_items.column("finding_key").to_pylist()
    )


def test_every_figure_is_the_sum_of_the_findings_listed_and_a_direct_query(db: Path) -> None:
    fig = _figures(db)
    items = fig.rollforward_items.to_pylist()
    for row in fig.rollforward.to_pylist():
        mine = [
            i for i in items if (i["family"], i["currency"]) == (row["family"], row["currency"])
        ]
        for col in (
            "open_start_minor",
            "new_minor",
            "resolved_minor",
            "change_minor",
            "open_end_count",
            "open_end_minor",
        ):
            assert row[col] == sum(i[col] for i in mine)
    con = duckdb.connect(str(db), read_only=True)
    direct = dict(
        con.execute(
            "SELECT currency, sum(amount_minor)::BIGINT FROM findings WHERE run_id = ? "
            "AND state IN ('new', 'open') GROUP BY currency",
            [O31],
        ).fetchall()
    )
    start = dict(
        con.execute(
            "SELECT currency, count(*) FROM findings WHERE run_id = ? GROUP BY currency", [S30]
        ).fetchall()
    )
    con.close()
    by_cur: dict[str, int] = {}
    for row in fig.rollforward.to_pylist():
        by_cur[row["currency"]] = by_cur.get(row["currency"], 0) + row["open_end_minor"]
    assert by_cur == direct == {"EUR": 420, "USD": 1040}
    assert sum(r["open_start_count"] for r in fig.rollforward.to_pylist()) == sum(start.values())
    # and against the findings as planted, independently of SQL
    planted_end = sum(v[O31][1] for v in FINDINGS.values() if O31 in v)
    assert sum(r["open_end_minor"] for r in fig.rollforward.to_pylist()) == planted_end


def test_provider_activity_is_the_records_as_they_stood_at_the_end(db: Path) -> None:
    fig = _figures(db)
    provider = {r["currency"]: r for r in fig.provider.to_pylist()}
    eur = provider["EUR"]
    # pay_1 confirmed by the 31st, pay_2 confirmed then (refunded only in November)
    assert (eur["payments_settled"], eur["settled_minor"]) == (2, 1500)
    assert (eur["refunds"], eur["refunded_minor"]) == (1, 200)  # ref_2 failed: not counted
    assert (eur["disputes"], eur["disputed_minor"], eur["net_minor"]) == (1, 300, 1000)
    # pay_5 (USD, created 31 Oct) was first read on 1 November: not as the period ended
    assert provider["USD"]["settled_minor"] == 0
    books = fig.books.to_pylist()  # type: ignore[union-attr]
    assert books == [
        {"currency": "EUR", "order_count": 2, "orders_minor": 1700, "matched_count": 1,
         "matched_minor": 1000, "break_count": 1, "pending_count": 0, "match_rate": 0.5}
    ]  # fmt: skip
    assert fig.matched_by_rule.to_pylist() == [  # type: ignore[union-attr]
        {"rule": "exact_reference", "currency": "EUR", "matches": 1, "amount_minor": 1000}
    ]
    assert len(fig.missing_days) == 28


def test_the_pack_opens_with_openpyxl_and_its_totals_equal_a_direct_query(
    db: Path, tmp_path: Path
) -> None:
    key = "over_refunded:pay_a:over_refunded"
    log = AckLog(acks_path(db))
    log.append(
        "assign", [(key, None)], note=None, owner="ann", at=datetime(2026, 10, 20, tzinfo=UTC)
    )
    log.append("assign", [(key, None)], note=None, owner="bo")  # while closing: shown
    code, out, err = _close("2026-10", "--db", str(db), "--reports", str(tmp_path / "reports"))
    assert code == 0, err
    assert "refunds      EUR  open 2 + new 1 - resolved 2 = 1  ties" in out
    folder = tmp_path / "reports" / "close-2026-10"
    wb = openpyxl.load_workbook(folder / "close.xlsx")
    assert wb.sheetnames == [
        "Summary", "Roll-forward", "Roll-forward items", "Open at cut-off", "Resolved in period",
        "Resolved manually", "Matched by rule", "Provider activity", "Books activity", "Cash",
    ]  # fmt: skip

    def rows(name: str) -> list[dict[str, object]]:
        ws = wb[name]
        values = list(ws.iter_rows(values_only=True))
        return [dict(zip(values[0], r, strict=True)) for r in values[1:]]

    end = {r["currency"]: 0.0 for r in rows("Roll-forward")}
    for r in rows("Roll-forward"):
        end[r["currency"]] += r["open_end"]  # type: ignore[operator]
    con = duckdb.connect(str(db), read_only=True)
    direct = dict(
        con.execute(
            "SELECT currency, sum(amount_minor) / 100 FROM findings WHERE run_id = ? "
            "AND state IN ('new', 'open') GROUP BY currency",
            [O31],
        ).fetchall()
    )
    con.close()
    assert end == pytest.approx(direct)
    assert {r["finding_key"] for r in rows("Open at cut-off")} == {
        k for k, v in FINDINGS.items() if O31 in v
    }
    work = {r["finding_key"]: (r["work_state"], r["owner"]) for r in rows("Open at cut-off")}
    assert work[key] == ("investigating", "bo")
    provider = {r["currency"]: r for r in rows("Provider activity")}
    assert provider["EUR"]["net"] == 10.0
    summary = {r["item"]: r["value"] for r in rows("Summary")}
    assert summary["status"] == "draft (not signed off)"
    html = (folder / "close.html").read_text()
    assert "Draft — not signed off" in html
    assert "✓ ties" in html
    assert "✗ does not tie" not in html


def test_sign_off_freezes_the_period_and_reopening_is_audited(db: Path, tmp_path: Path) -> None:
    reports = str(tmp_path / "reports")
    base = ("2026-10", "--db", str(db), "--reports", reports)
    code, _, err = _close(*base, "--sign-off", "Dana Controller")
    assert (code, "--sign-off: needs a name and a --note" in err) == (2, True)
    code, out, _ = _close(*base, "--sign-off", "Dana Controller", "--note", "October tied")
    assert code == 0
    assert "signed off by Dana Controller" in out
    html = (tmp_path / "reports" / "close-2026-10" / "close.html").read_text()
    assert "Signed off by <strong>Dana Controller</strong>" in html
    before = (tmp_path / "reports" / "close-2026-10" / "close.xlsx").read_bytes()
    code, _, err = _close(*base)
    assert code == 1
    assert "recon: period 2026-10 is closed: signed off by Dana Controller on" in err
    assert (tmp_path / "reports" / "close-2026-10" / "close.xlsx").read_bytes() == before
    code, _, err = _close(*base, "--reopen")
    assert (code, "--reopen: needs a --note" in err) == (2, True)
    code, out, _ = _close(*base, "--reopen", "--note", "late refund booked")
    assert (code, "draft (not signed off)" in out) == (0, True)
    lines = [orjson.loads(x) for x in acks_path(db).read_bytes().splitlines()]
    assert [(x["action"], x["finding_key"], x["note"]) for x in lines] == [
        ("close", "period:2026-10", "October tied"),
        ("reopen", "period:2026-10", "late refund booked"),
    ]
    assert lines[0]["signed_off_by"] == "Dana Controller"
    assert len(lines[0]["close_xlsx_sha256"]) == 64
    assert CliRunner().invoke(app, ["findings", "verify", "--db", str(db)]).exit_code == 0


def test_an_incomplete_night_needs_accepting_and_says_so_on_the_cover(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    db = build(tmp_path / "data" / "recon.duckdb", incomplete=O15)
    reports = str(tmp_path / "reports")
    code, _, err = _close("2026-10", "--db", str(db), "--reports", reports)
    assert code == 2
    assert f"2026-10 has 1 night(s) that are not complete: {O15} (incomplete: disputes" in err
    assert "--accept-incomplete" in err
    code, out, _ = _close("2026-10", "--db", str(db), "--reports", reports, "--accept-incomplete")
    assert code == 0
    assert "closed with 1 incomplete night(s) (accepted, on the cover)" in out
    html = (tmp_path / "reports" / "close-2026-10" / "close.html").read_text()
    assert "Closed with 1 incomplete night (accepted):" in html


def test_a_period_without_a_run_or_a_bad_month_is_refused(db: Path) -> None:
    code, _, err = _close("2026-13", "--db", str(db))
    assert (code, err.strip()) == (
        2,
        "recon: bad setting PERIOD: '2026-13' is not a month like 2026-10",
    )
    code, _, err = _close("2025-01", "--db", str(db))
    assert code == 1
    assert "no loaded run started in 2025-01: nothing to close" in err
    assert N01  # the November run exists but is outside every October figure


def test_the_pack_holds_no_personal_data_from_notes_or_details(db: Path, tmp_path: Path) -> None:
    key = "ledger_amount_mismatch:ORD-D:provider_short"
    AckLog(acks_path(db)).append(
        "ack", [(key, None)], note="customer jane.doe@example.com says paid", who="ana"
    )
    con = duckdb.connect(str(db))
    con.execute(
        "UPDATE findings SET detail = 'card 4242 4242 4242 4242 declined' WHERE finding_key = ?",
        [key],
    )
    con.close()
    assert _close("2026-10", "--db", str(db), "--reports", str(tmp_path / "r"))[0] == 0
    folder = tmp_path / "r" / "close-2026-10"
    html = (folder / "close.html").read_text()
    assert "jane.doe@example.com" not in html
    assert "4242 4242 4242 4242" not in html
    assert "[personal data removed]" in html
    wb = openpyxl.load_workbook(folder / "close.xlsx")
    text = " ".join(
        str(v) for ws in wb.worksheets for row in ws.iter_rows(values_only=True) for v in row if v
    )
    assert "jane.doe@example.com" not in text
    assert "4242 4242 4242 4242" not in text


def test_matched_by_rule_reads_the_rule_column_when_matching_records_it(db: Path) -> None:
    con = duckdb.connect(str(db))
    con.execute("UPDATE ledger_matches SET rule = 'within_tolerance' WHERE entity_id = 'ORD-1'")
    con.close()
    assert _figures(db).matched_by_rule.to_pylist() == [
        {"rule": "within_tolerance", "currency": "EUR", "matches": 1, "amount_minor": 1000}
    ]
