"""Permanent failure: one payments page answers 503 every time (the sandbox's `chaos`).

Pass: exit 3, run `incomplete`; the page's request ids (every attempt) are in the
`failed_calls` view, summary.json, failed_calls.csv and the HTML report's headline section;
the check that needs every payment is `not_evaluated`, the others that read payments judge
the payments read and say which offsets they could not (issue 15); and after a complete
night nothing that was open is marked resolved by the incomplete one.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from recon.night import nightly as steps

from .conftest import overrides_for, read_only, sandbox, sandbox_state

pytestmark = [pytest.mark.integration, pytest.mark.slow]

NEEDS_EVERY_PAYMENT = ("refund_unknown_payment",)
OVER_PAYMENTS_READ = (
    "refunded_amount_mismatch",
    "partially_refunded_out_of_range",
    "confirmed_with_refunds",
    "over_refunded",
    "refund_currency_mismatch",
    "refund_on_unrefundable_payment",
    "dispute_on_refunded_payment",
    "duplicate_payment_reference",
    "stuck_non_final",
)


def test_permanent_failure_after_a_complete_night(tmp_path: Path) -> None:
    overrides = None
    with sandbox(seed=5, payments=1500) as url:
        overrides = overrides_for(tmp_path, url)
        first = steps.run_local(overrides)
    assert (first.status, first.exit_code) == ("complete", steps.EXIT_COMPLETE)

    with sandbox(seed=5, payments=1500, faults="chaos") as url:
        overrides = overrides_for(tmp_path, url)
        night = steps.run_local(overrides)
        poisoned = sandbox_state(url)["poisonedPaymentsSkip"]
    assert (night.status, night.exit_code) == ("incomplete", steps.EXIT_INCOMPLETE)

    con = read_only(night.db_path)
    rows = con.execute(
        "SELECT query, http_status, request_id, request_ids, attempts FROM failed_calls "
        "WHERE run_id = ? AND resource = 'payments'",
        [night.run_id],
    ).fetchall()
    # the window holding the poisoned payment (at its skip when paged sequentially; an
    # overlapping window when pages are fetched ahead) fails every time
    page = [r for r in rows if _holds(r[0] or "", poisoned)]
    assert len(page) == 1, rows
    query, status, last_rid, rids, attempts = page[0]
    failed_skip = int(dict(p.split("=", 1) for p in query.split("&"))["skip"])
    assert status == 503
    assert len(rids) == attempts >= 2  # every attempt's id, not only the last one
    assert last_rid == rids[-1]
    assert all(r.startswith("req_") for r in rids)

    folder = night.report_dir
    assert folder is not None
    summary = json.loads((folder / "summary.json").read_text())
    text = json.dumps(summary)
    with (folder / "failed_calls.csv").open(newline="", encoding="utf-8-sig") as fh:
        csv_text = "\n".join(",".join(r) for r in csv.reader(fh))
    html = (folder / "report.html").read_text()
    headline = html[: html.index("</table>", html.index("failed API calls"))]
    for rid in rids:
        assert rid in text, f"{rid} not in summary.json"
        assert rid in csv_text, f"{rid} not in failed_calls.csv"
    for rid in rids:  # every attempt's id, in the failed-calls table under the headline
        assert rid in headline, f"{rid} is not in the HTML headline"
    assert "incomplete" in html.lower()

    runs = {
        r[0]: (r[1], r[2])
        for r in con.execute(
            "SELECT check_name, status, coverage FROM check_runs WHERE run_id = ?",
            [night.run_id],
        ).fetchall()
    }
    statuses = {name: status for name, (status, _) in runs.items()}
    for check in NEEDS_EVERY_PAYMENT:
        assert statuses[check] == "not_evaluated", check
    for check in OVER_PAYMENTS_READ:
        status, coverage = runs[check]
        assert status in ("passed", "failed"), check
        assert isinstance(coverage, str), check
        assert f"payments read (offsets {failed_skip:,}-" in coverage, (check, coverage)
    assert statuses["extraction_completeness"] == "failed"

    # Nothing that was open after the complete night is resolved by the incomplete one.
    before = {
        r[0]
        for r in con.execute(
            "SELECT finding_key FROM findings WHERE run_id = ? AND state IN ('new', 'open')",
            [first.run_id],
        ).fetchall()
    }
    after = dict(
        con.execute(
            "SELECT finding_key, state FROM findings WHERE run_id = ?", [night.run_id]
        ).fetchall()
    )
    assert before
    resolved = sorted(k for k in before if after.get(k) != "open")
    assert not resolved, resolved[:10]
    assert "resolved" not in set(after.values())
    gone = con.execute(
        "SELECT count(*) FROM payments WHERE gone_in_run = ?", [night.run_id]
    ).fetchone()
    assert gone == (0,)  # an incomplete scan marks no record gone
    print(f"permanent failure: {attempts} attempts of skip={failed_skip}, {len(before)} kept open")


def _holds(query: str, index: int) -> bool:
    """Does the list request `query` (skip, max-records) cover the record at `index`?"""
    params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
    skip, size = int(params.get("skip", 0)), int(params.get("max-records", 200))
    return skip <= index < skip + size
