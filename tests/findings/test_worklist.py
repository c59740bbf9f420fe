"""The Excel round trip: export a worklist, fill it in as a user would (openpyxl), import it:
valid rows applied, stale and malformed rows refused with their row numbers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import openpyxl
import orjson
from typer.testing import CliRunner

from recon.cli import app
from recon.findings.acks import acks_path

from .conftest import KEY_A, KEY_B, KEY_C, KEY_D, R0, R1, add_findings

KEY_E = "stuck_non_final:pay_5:stuck"
KEY_F = "stuck_non_final:pay_6:stuck"
KEY_G = "stuck_non_final:pay_7:stuck"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["findings", *args])
    return result.exit_code, result.stdout, result.stderr


def _fill(path: Path, rows: dict[str, dict[str, object]]) -> None:
    wb = openpyxl.load_workbook(path)
    ws = wb["Worklist"]
    header = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2):
        key = row[0].value
        for column, value in rows.get(str(key), {}).items():
            row[header.index(column)].value = value
    wb.save(path)


def test_export_is_a_protected_worklist_with_editable_columns(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "worklist.xlsx"
    code, stdout, _ = _run("export", str(out), "--state", "open", "--db", str(db))
    assert (code, stdout.strip()) == (0, f"wrote 4 finding(s) to {out}")
    wb = openpyxl.load_workbook(out)
    ws = wb["Worklist"]
    header = [c.value for c in ws[1]]
    assert header[:9] == ["key", "check", "state", "current owner", "currency", "amount",
                          "first seen", "detail", "lapsed"]  # fmt: skip
    assert header[9:] == ["action", "owner", "reason", "note", "until", "version"]
    assert ws.protection.sheet
    rows = {r[0].value: r for r in ws.iter_rows(min_row=2)}
    assert set(rows) == {KEY_A, KEY_B, KEY_C, KEY_D}
    d = rows[KEY_D]
    assert d[0].protection.locked
    assert [d[header.index(c)].protection.locked for c in ("action", "owner", "note")] == [
        False
    ] * 3
    assert d[header.index("detail")].data_type == "s"  # text, never a formula
    assert d[header.index("detail")].value == '=HYPERLINK("http://x")'
    assert d[header.index("amount")].value == 700
    assert d[header.index("amount")].number_format == '#,##0 "JPY"'
    assert rows[KEY_A][header.index("amount")].value == 1.5
    assert ws.column_dimensions["O"].hidden  # the version column
    validations = {str(v.sqref): v.formula1 for v in ws.data_validations.dataValidation}
    assert validations["J2:J5"] == '"ack,unack,assign,resolve,match"'


def test_round_trip_applies_valid_rows_and_refuses_stale_and_malformed(
    db: Path, tmp_path: Path
) -> None:
    add_findings(
        db,
        R1,
        [
            (k, "open", "payment", k.split(":")[1], "EUR", 100, "d", R0)
            for k in (KEY_E, KEY_F, KEY_G)
        ],
    )
    out = tmp_path / "worklist.xlsx"
    assert _run("export", str(out), "--db", str(db))[0] == 0
    until = (datetime.now(UTC) + timedelta(days=30)).date().isoformat()
    _fill(
        out,
        {
            KEY_A: {"action": "ack", "note": "FX rounding, ticket 4711", "until": until},
            KEY_B: {"action": "assign", "owner": "ann", "note": "asking the shop"},
            KEY_C: {"action": "resolve", "reason": "written_off", "note": "below threshold"},
            KEY_D: {"action": "ack", "note": "stale by now"},
            KEY_E: {"action": "shelve", "note": "x"},
            KEY_F: {"action": "ack"},
            KEY_G: {"action": "resolve", "note": "no reason given"},
        },
    )
    con = duckdb.connect(str(db))  # someone else's night: KEY_D's amount moved since the export
    con.execute("UPDATE findings SET amount_minor = 701 WHERE finding_key = ?", [KEY_D])
    con.close()
    rows = {
        r[0].value: r[0].row for r in openpyxl.load_workbook(out)["Worklist"].iter_rows(min_row=2)
    }
    code, stdout, _ = _run("import", str(out), "--db", str(db))
    assert code == 1  # something was refused
    lines = stdout.strip().splitlines()
    assert set(lines[:-1]) == {
        f"row {rows[KEY_A]}: acknowledged {KEY_A}",
        f"row {rows[KEY_B]}: assigned {KEY_B}",
        f"row {rows[KEY_C]}: resolved manually {KEY_C}",
        f"row {rows[KEY_D]}: refused: {KEY_D} changed since the export "
        "(its amounts or a decision on it): export again",
        f"row {rows[KEY_E]}: refused: unknown action 'shelve' "
        "(one of ack, unack, assign, resolve, match)",
        f"row {rows[KEY_F]}: refused: ack needs a note saying why",
        f"row {rows[KEY_G]}: refused: resolve needs a reason code (timing, provider_error, "
        "books_error, written_off, duplicate, other), not none",
    }
    assert lines[-1] == (
        "applied 3 row(s) (1 acknowledged, 1 assigned, 1 resolved manually); refused 4; "
        "0 row(s) without an action left as they were"
    )
    trail = [orjson.loads(x) for x in acks_path(db).read_bytes().splitlines()]
    assert sorted((x["action"], x["finding_key"]) for x in trail) == sorted(
        [("ack", KEY_A), ("assign", KEY_B), ("resolve", KEY_C)]
    )
    ack = next(x for x in trail if x["action"] == "ack")
    assert (ack["until"], ack["note"]) == (until, "FX rounding, ticket 4711")
    # The same file again: the applied rows are "already applied", nothing is applied twice.
    code, stdout, _ = _run("import", str(out), "--db", str(db))
    assert (
        stdout.strip()
        .splitlines()[-1]
        .startswith("applied 0 row(s) (nothing); 3 already applied; refused 4")
    )
    assert f"row {rows[KEY_A]}: already applied (acknowledged {KEY_A}): nothing written" in stdout
    assert len(acks_path(db).read_bytes().splitlines()) == 3
    assert _run("verify", "--db", str(db))[0] == 0


def test_a_file_that_is_no_worklist_is_refused_whole(db: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.xlsx"
    wb = openpyxl.Workbook()
    wb.active.title = "Sheet1"  # type: ignore[union-attr]
    wb.save(other)
    code, _, err = _run("import", str(other), "--db", str(db))
    assert (code, err.strip()) == (
        2,
        "recon: bad setting WORKLIST: other.xlsx has no sheet 'Worklist': not a worklist",
    )
    (tmp_path / "junk.xlsx").write_bytes(b"not a zip")
    code, _, err = _run("import", str(tmp_path / "junk.xlsx"), "--db", str(db))
    assert code == 2
    assert "junk.xlsx cannot be read as .xlsx" in err
    assert "Traceback" not in err


def test_the_worklist_holds_no_personal_data(db: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(db))
    con.execute(
        "UPDATE findings SET detail = 'paid by jane.doe@example.com' WHERE finding_key = ?",
        [KEY_B],
    )
    con.close()
    out = tmp_path / "worklist.xlsx"
    assert _run("export", str(out), "--db", str(db))[0] == 0
    ws = openpyxl.load_workbook(out)["Worklist"]
    details = [r[7] for r in ws.iter_rows(min_row=2, values_only=True)]
    assert "paid by [personal data removed]" in details
    assert not any("jane.doe" in str(d) for d in details)


def test_a_corrected_worklist_imported_again_applies_the_rest_and_exits_0(
    db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "worklist.xlsx"
    assert _run("export", str(out), "--db", str(db))[0] == 0
    _fill(out, {KEY_A: {"action": "ack", "note": "FX"}, KEY_B: {"action": "ack"}})
    assert _run("import", str(out), "--db", str(db))[0] == 1  # KEY_B: no note
    _fill(out, {KEY_B: {"note": "now with a note"}})
    code, stdout, _ = _run("import", str(out), "--db", str(db))
    assert code == 0, stdout
    assert (
        stdout.strip()
        .splitlines()[-1]
        .startswith("applied 1 row(s) (1 acknowledged); 1 already applied; refused 0")
    )
    assert len(acks_path(db).read_bytes().splitlines()) == 2


def test_two_imports_of_one_worklist_at_once_apply_it_once(db: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    keys = [f"stuck_non_final:pay_{n}:stuck" for n in range(10, 20)]
    add_findings(db, R1, [(k, "open", "payment", k.split(":")[1], "EUR", 100, "d", R0)
                          for k in keys])  # fmt: skip
    out = tmp_path / "worklist.xlsx"
    assert _run("export", str(out), "--check", "stuck_non_final", "--db", str(db))[0] == 0
    _fill(out, {k: {"action": "ack", "note": f"batch {k}"} for k in keys})
    recon = [sys.executable, "-m", "recon", "findings", "import", str(out), "--db", str(db)]
    both = [subprocess.Popen(recon, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]  # fmt: skip
    results = [p.communicate(timeout=120) for p in both]
    assert [p.returncode for p in both] == [0, 0], results
    trail = [orjson.loads(x) for x in acks_path(db).read_bytes().splitlines()]
    assert sorted(x["finding_key"] for x in trail) == sorted(keys)  # 10 lines, not 20
    tails = sorted(r[0].strip().splitlines()[-1] for r in results)
    assert tails[0].startswith("applied 0 row(s) (nothing); 10 already applied; refused 0")
    assert tails[1].startswith("applied 10 row(s) (10 acknowledged); refused 0")
