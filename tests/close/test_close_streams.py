"""The close at a million findings holds batches, not lists (issue 38), shown at small scale:
the long lists are spooled to disk and decided a batch at a time, the audit trail is read
once as a stream, close.xlsx is written a row at a time, and close.html lists the first rows
of each list — with the same pack as before."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import openpyxl
import pyarrow as pa
import pytest

import recon.close.period as period_module
from recon.close import close_period, compute_period, parse_period
from recon.close.spool import SpooledTable
from recon.findings.acks import AckLog, acks_path

from .conftest import FINDINGS, O31


def _figures(db: Path):  # type: ignore[no-untyped-def]
    con = duckdb.connect(str(db), read_only=True)
    try:
        return compute_period(con, parse_period("2026-10"), acks_path(db))
    finally:
        con.close()


def test_the_long_lists_are_spooled_and_decided_a_batch_at_a_time(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "over_refunded:pay_a:over_refunded"
    AckLog(acks_path(db)).append(
        "assign", [(key, None)], note=None, owner="ann", at=datetime(2026, 10, 20, tzinfo=UTC)
    )
    whole = _figures(db)
    sizes: list[int] = []
    decide = period_module._with_work

    def spy(table: pa.Table, *args: object) -> pa.Table:
        sizes.append(table.num_rows)
        return decide(table, *args)  # type: ignore[arg-type]

    monkeypatch.setattr("recon.close.period.BATCH_ROWS", 1)
    monkeypatch.setattr("recon.close.period.PART_ROWS", 1)  # the windows: a finding a part
    monkeypatch.setattr("recon.close.period._with_work", spy)
    # the trail is read as a stream, never whole
    monkeypatch.setattr(AckLog, "read", lambda self: pytest.fail("the trail was read whole"))
    batched = _figures(db)
    open_at_end = [k for k, v in FINDINGS.items() if O31 in v]
    assert [n for n in sizes if n] == [1] * len(open_at_end)  # a finding a batch, each decided
    for name in ("rollforward_items", "open_items", "resolved_items"):
        spooled = getattr(batched, name)
        assert isinstance(spooled, SpooledTable)
        assert spooled.path.exists()
        assert spooled.read().equals(getattr(whole, name).read())
    owners = dict(
        zip(
            batched.open_items.column("finding_key").to_pylist(),
            batched.open_items.column("owner").to_pylist(),
            strict=True,
        )
    )
    assert owners[key] == "ann"
    path = batched.open_items.path
    del batched
    assert not path.exists()  # the spooled file goes with the figures


def test_a_spooled_table_reads_like_the_table_it_replaces(tmp_path: Path) -> None:
    table = pa.table({"k": [f"f{i}" for i in range(7)], "n": list(range(7))})
    spooled = SpooledTable.write(table.to_batches(max_chunksize=2), table.schema)
    assert (spooled.num_rows, spooled.column_names) == (7, ["k", "n"])
    assert spooled.slice(3, 3).to_pylist() == table.slice(3, 3).to_pylist()
    assert spooled.slice(5, 10).num_rows == 2
    assert [b.num_rows for b in spooled.to_batches(max_chunksize=3)] == [3, 3, 1]
    assert spooled.column("n").to_pylist() == list(range(7))
    assert spooled.to_pylist() == table.to_pylist()
    empty = SpooledTable.write([], table.schema)
    assert (empty.num_rows, empty.slice(0, 5).num_rows, empty.column("k").to_pylist()) == (0, 0, [])


def test_close_html_lists_the_first_rows_and_close_xlsx_every_row(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("recon.close.pack.HTML_ROWS", 1)
    paths = close_period(
        db, acks_path(db), tmp_path / "reports", parse_period("2026-10"), accept_incomplete=True
    )
    html = paths.html.read_text()
    open_at_end = [k for k, v in FINDINGS.items() if O31 in v]
    assert f"{len(open_at_end)} findings" in html
    assert "the first 1 here, all in close.xlsx" in html
    listed = html[html.index('<h2 id="open">') : html.index('<h2 id="resolved">')]
    assert listed.count("<tr><td>") == 1
    wb = openpyxl.load_workbook(paths.xlsx)
    ws = wb["Open at cut-off"]
    header = [c.value for c in ws[1]]
    keys = {r[header.index("finding_key")] for r in ws.iter_rows(min_row=2, values_only=True)}
    assert keys == set(open_at_end)
