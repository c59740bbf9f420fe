"""The period (issue 39): a month is signed off once it has ended (or provisionally), under the
night lock, by someone recorded beside the name they give, with the trail's head written
into the pack; failed nights a later night covered are listed, not holding the close up;
close.xlsx shows counts as counts, amounts in currency units and rates as per cent; ages
are measured to the cut-off; a repeated manual resolution is one row."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import openpyxl
import orjson
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.close import SignOff, close_period, parse_period
from recon.findings.acks import AckLog, acks_path, line_hash
from recon.warehouse.nightlock import night_lock

from .conftest import O31, build


def _close(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["close", *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_month_is_signed_off_only_after_it_ends_unless_provisional(
    db: Path, tmp_path: Path
) -> None:
    october = parse_period("2026-10")
    during = datetime(2026, 10, 29, 12, tzinfo=UTC)
    with pytest.raises(Exception, match="2026-10 has not ended") as refused:
        close_period(db, acks_path(db), tmp_path / "r", october,
                     sign_off=SignOff("Dana", "early"), now=during)  # fmt: skip
    assert "--provisional" in str(refused.value)
    assert not acks_path(db).exists() or acks_path(db).read_bytes() == b""
    early = SignOff("Dana", "early", provisional=True)
    paths = close_period(db, acks_path(db), tmp_path / "r", october, sign_off=early, now=during)
    assert "PROVISIONAL (before the period ended)" in paths.html.read_text()
    line = orjson.loads(acks_path(db).read_bytes().splitlines()[-1])
    assert (line["action"], line["provisional"]) == ("close", True)


def test_a_sign_off_records_who_beside_the_name_and_the_trail_head(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    AckLog(acks_path(db)).append("assign", [("over_refunded:pay_a:over_refunded", None)],
                                 note=None, owner="ann")  # fmt: skip
    before = acks_path(db).read_bytes().splitlines()
    monkeypatch.setenv("RECON_USER", "dana.k")
    reports = tmp_path / "reports"
    code, _, err = _close("2026-10", "--db", str(db), "--reports", str(reports),
                          "--sign-off", "Dana Controller", "--note", "October tied")  # fmt: skip
    assert code == 0, err
    line = orjson.loads(acks_path(db).read_bytes().splitlines()[-1])
    assert (line["who"], line["signed_off_by"]) == ("dana.k", "Dana Controller")
    head = {"lines": 1, "head": line_hash(before[0])}
    assert line["trail_head"] == head
    html = (reports / "close-2026-10" / "close.html").read_text()
    assert f'<meta name="recon-trail-head" content="1 {head["head"]}">' in html
    assert "(recorded as <code>dana.k</code>)" in html
    wb = openpyxl.load_workbook(reports / "close-2026-10" / "close.xlsx")
    summary = {r[0]: r[1] for r in wb["Summary"].iter_rows(values_only=True)}
    assert summary["recorded as"] == "dana.k"
    assert summary["audit trail head"] == f"1 line(s), {head['head']}"
    # The pack's head catches the trail forged (warehouse record and all) under it.
    from recon.findings.trail_table import load_acks

    acks_path(db).write_bytes(acks_path(db).read_bytes().replace(b'"ann"', b'"eve"'))
    acks_path(db).write_bytes(acks_path(db).read_bytes().replace(b'"ann"', b'"eve"'))
    con = duckdb.connect(str(db))
    load_acks(con, acks_path(db))
    con.close()
    verify = CliRunner().invoke(app, ["findings", "verify", "--db", str(db),
                                      "--reports", str(reports)])  # fmt: skip
    assert verify.exit_code == 1
    assert "close-2026-10/close.html" in verify.stderr or "line 1" in verify.stderr


def test_a_sign_off_waits_for_no_night_it_is_refused_while_one_runs(
    db: Path, tmp_path: Path
) -> None:
    with night_lock(db):  # held by this process: re-entrant; another process is refused
        pass
    import subprocess
    import sys

    script = (
        "import sys, time\nfrom pathlib import Path\n"
        "from recon.warehouse.nightlock import night_lock\n"
        "with night_lock(Path(sys.argv[1])):\n    print('held', flush=True)\n    time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", script, str(db)], stdout=subprocess.PIPE,
                              text=True)  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        code, _, err = _close("2026-10", "--db", str(db), "--reports", str(tmp_path / "r"),
                              "--sign-off", "Dana", "--note", "n")  # fmt: skip
        assert code == 1
        assert "another recon run" in err
        assert not acks_path(db).exists() or b'"close"' not in acks_path(db).read_bytes()
        code, _, _ = _close("2026-10", "--db", str(db), "--reports", str(tmp_path / "r"))
        assert code == 0  # a draft reads a published file: no lock needed
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()


def test_failed_nights_covered_by_a_later_night_are_listed_not_refused(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    db = build(tmp_path / "data" / "recon.duckdb")
    con = duckdb.connect(str(db))
    for run_id, day, why in (
        ("20261003T020000Z-000010", "2026-10-03", "the API refused the key"),
        ("20261004T020000Z-000011", "2026-10-04", "nothing answers at the base URL"),
    ):
        con.execute(
            "INSERT INTO runs BY NAME SELECT ? AS run_id, ? AS started_at, 'failed' AS status, "
            "? AS reason, ? AS loaded_at",
            [run_id, datetime.fromisoformat(f"{day}T02:00:00+00:00"), why,
             datetime.fromisoformat(f"{day}T02:01:00+00:00")],
        )  # fmt: skip
    con.close()
    code, out, err = _close("2026-10", "--db", str(db), "--reports", str(tmp_path / "r"))
    assert code == 0, err
    assert "2 failed night(s) covered by a later complete one (listed)" in out
    html = (tmp_path / "r" / "close-2026-10" / "close.html").read_text()
    assert "<code>20261003T020000Z-000010</code> — the API refused the key" in html


def test_the_latest_night_failed_still_holds_the_close_up(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    db = build(tmp_path / "data" / "recon.duckdb")
    con = duckdb.connect(str(db))
    con.execute("UPDATE runs SET status = 'failed', reason = 'refused' WHERE run_id = ?", [O31])
    con.close()
    code, _, err = _close("2026-10", "--db", str(db), "--reports", str(tmp_path / "r"))
    assert code == 2
    assert "--accept-incomplete" in err
    assert "--retry-failed that" not in err


def test_close_xlsx_counts_amounts_and_rates_keep_their_kinds(db: Path, tmp_path: Path) -> None:
    assert _close("2026-10", "--db", str(db), "--reports", str(tmp_path / "r"))[0] == 0
    wb = openpyxl.load_workbook(tmp_path / "r" / "close-2026-10" / "close.xlsx")
    ws = wb["Books activity"]
    head = [c.value for c in ws[1]]
    cells = dict(zip(head, ws[2], strict=True))
    assert cells["order_count"].value == 2
    assert "EUR" not in cells["order_count"].number_format  # a count, not money
    assert cells["orders"].value == pytest.approx(17.0)  # EUR 17.00, not 1700
    assert cells["orders"].number_format == '#,##0.00 "EUR"'
    assert cells["matched"].number_format == '#,##0.00 "EUR"'
    assert (cells["match_rate"].value, cells["match_rate"].number_format) == (0.5, "0.0%")


def test_ages_are_measured_to_the_cut_off(db: Path, tmp_path: Path) -> None:
    assert _close("2026-10", "--db", str(db), "--reports", str(tmp_path / "r"))[0] == 0
    wb = openpyxl.load_workbook(tmp_path / "r" / "close-2026-10" / "close.xlsx")
    values = list(wb["Open at cut-off"].iter_rows(values_only=True))
    rows = {r[values[0].index("finding_key")]: r[values[0].index("known_days")]
            for r in values[1:]}  # fmt: skip
    assert rows["over_refunded:pay_a:over_refunded"] == 31  # first seen 30 September
    assert rows["ledger_amount_mismatch:ORD-D:provider_short"] == 16  # 15 to 31 October


def test_a_repeated_manual_resolution_is_one_row_of_the_pack(db: Path, tmp_path: Path) -> None:
    key = "ledger_amount_mismatch:ORD-D:provider_short"
    log = AckLog(acks_path(db))
    for day in (20, 21):
        log.append("resolve", [(key, None)], note="booked late", reason="timing",
                   at=datetime(2026, 10, day, tzinfo=UTC))  # fmt: skip
    assert _close("2026-10", "--db", str(db), "--reports", str(tmp_path / "r"))[0] == 0
    wb = openpyxl.load_workbook(tmp_path / "r" / "close-2026-10" / "close.xlsx")
    rows = list(wb["Resolved manually"].iter_rows(values_only=True))[1:]
    assert [r[0] for r in rows] == [key]
