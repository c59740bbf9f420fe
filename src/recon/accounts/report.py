"""The group page: `reports/group.html` (and `group.json`) over every account's night.

One row per account: its status and exit code, how complete its extraction was (resources
complete of those read, failed pages, failed calls), its findings, its amounts at risk per
currency (error and warn checks, never summed across currencies), and a link to its own
report (`<account>/<run_id>/report.html`, relative, so the folder can be copied whole).
Everything is read from each account's `summary.json`, which its report already wrote: the
page reads no warehouse, and no personal data (the summaries carry none). An account
that was aborted before it reported shows its one-line reason.
"""

from __future__ import annotations

import html
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from recon.errors import scrub
from recon.money.currency import format_minor, is_iso4217
from recon.output.atomic import atomic_write_text

if TYPE_CHECKING:
    from recon.accounts.outcome import AccountOutcome, GroupSummary

__all__ = ["account_row", "render_group_page"]

_RISK_SEVERITIES = ("error", "warn")
_COLOURS = {
    "complete": "#1a7f37",
    "incomplete": "#9a6700",
    "failed": "#cf222e",
    "aborted": "#cf222e",
}


def _summary_json(outcome: AccountOutcome) -> dict[str, Any] | None:
    if outcome.report_dir is None:
        return None
    try:
        data = orjson.loads((outcome.report_dir / "summary.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def account_row(outcome: AccountOutcome, reports_dir: Path) -> dict[str, Any]:
    """What the group page shows of one account (also its entry in group.json)."""
    row: dict[str, Any] = {
        "account": outcome.account,
        "status": outcome.status,
        "exit_code": outcome.exit_code,
        "run_id": outcome.run_id,
        "reason": scrub(outcome.reason) if outcome.reason else None,
        "report": None,
        "resources_complete": None,
        "resources": None,
        "failed_pages": None,
        "failed_calls": None,
        "findings_open": None,
        "findings_new": None,
        "amounts_at_risk": [],
    }
    data = _summary_json(outcome)
    if outcome.report_dir is not None:
        target = outcome.report_dir / "report.html"
        row["report"] = os.path.relpath(target.resolve(), reports_dir.resolve())
    if data is None:
        return row
    resources = [r for r in data.get("resources", []) if r.get("status") != "skipped"]
    row["resources"] = len(resources)
    row["resources_complete"] = sum(r.get("status") == "complete" for r in resources)
    row["failed_pages"] = sum(int(r.get("failed_pages") or 0) for r in resources)
    totals = data.get("totals", {})
    row["failed_calls"] = totals.get("failed_calls")
    row["findings_open"] = totals.get("findings_open")
    row["findings_new"] = totals.get("findings_new")
    risk: dict[str, list[int]] = {}
    for check in data.get("checks", []):
        if check.get("severity") not in _RISK_SEVERITIES:
            continue
        for amount in check.get("amounts_at_risk", []):
            if amount.get("amount_minor") is None:
                continue
            entry = risk.setdefault(str(amount.get("currency")), [0, 0])
            entry[0] += int(amount["amount_minor"])
            entry[1] += int(amount.get("findings") or 0)
    row["amounts_at_risk"] = [
        {"currency": cur, "amount_minor": total, "findings": n}
        for cur, (total, n) in sorted(risk.items())
    ]
    return row


def _money(amount: int, currency: str) -> str:
    if is_iso4217(currency):
        return format_minor(amount, currency)
    return f"{currency} {amount:,} (minor units)"


def _when(night_id: str) -> str:
    """`20261125T020000Z-…` as `2026-11-25 02:00 UTC` (the id itself when it is not one)."""
    try:
        at = datetime.strptime(night_id[:16], "%Y%m%dT%H%M%SZ")
    except ValueError:
        return night_id
    return f"{at:%Y-%m-%d %H:%M} UTC"


def _cell(value: Any) -> str:
    return (
        "—"
        if value is None
        else html.escape(f"{value:,}" if isinstance(value, int) else str(value))
    )


def render_group_page(reports_dir: Path, summary: GroupSummary) -> Path:
    """Write `reports_dir/group.html` and `group.json`; returns the page's path."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    rows = [account_row(o, reports_dir) for o in summary.outcomes]
    generated = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    document = {
        "night_id": summary.night_id,
        "status": summary.status,
        "exit_code": summary.exit_code,
        "generated_at": generated,
        "consolidated": str(summary.consolidated.resolve()) if summary.consolidated else None,
        "accounts": rows,
    }
    body = []
    for row in rows:
        colour = _COLOURS.get(row["status"], "#cf222e")
        name = html.escape(row["account"])
        link = f'<a href="{html.escape(row["report"])}">{name}</a>' if row["report"] else name
        complete = (
            f"{row['resources_complete']} of {row['resources']} resources complete"
            if row["resources"] is not None
            else "—"
        )
        if row["failed_pages"]:
            complete += f"; {row['failed_pages']:,} page(s) failed"
        risk = (
            "<br>".join(
                f"{html.escape(_money(a['amount_minor'], a['currency']))} ({a['findings']:,})"
                for a in row["amounts_at_risk"]
            )
            or "—"
        )
        reason = f"<br><small>{html.escape(row['reason'])}</small>" if row["reason"] else ""
        run = html.escape(row["run_id"] or "—")
        if row["report"]:  # the run's report, and the account's every run beside it
            index = html.escape((Path(row["report"]).parent.parent / "index.html").as_posix())
            run = (
                f'<a href="{html.escape(row["report"])}">{run}</a>'
                f'<br><small><a href="{index}">all runs of {name}</a></small>'
            )
        body.append(
            "<tr>"
            f"<td>{link}</td>"
            f'<td style="color:{colour}"><b>{html.escape(row["status"])}</b> '
            f"(exit {row['exit_code']}){reason}</td>"
            f"<td>{run}</td>"
            f"<td>{html.escape(complete)}</td>"
            f"<td>{_cell(row['failed_calls'])}</td>"
            f"<td>{_cell(row['findings_open'])} ({_cell(row['findings_new'])} new)</td>"
            f'<td class="risk">{risk}</td>'
            "</tr>"
        )
    totals: dict[str, list[int]] = {}
    for row in rows:
        for a in row["amounts_at_risk"]:
            entry = totals.setdefault(a["currency"], [0, 0])
            entry[0] += a["amount_minor"]
            entry[1] += a["findings"]
    document["amounts_at_risk"] = [
        {"currency": c, "amount_minor": t, "findings": n} for c, (t, n) in sorted(totals.items())
    ]
    atomic_write_text(
        reports_dir / "group.json", orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()
    )
    group_risk = "<br>".join(
        f"{html.escape(_money(t, c))} ({n:,})" for c, (t, n) in sorted(totals.items())
    )
    body.append(
        f'<tr><td colspan="6"><b>all {len(rows)} accounts</b></td>'
        f'<td class="risk"><b>{group_risk or "—"}</b></td></tr>'
    )
    colour = _COLOURS.get(summary.status, "#cf222e")
    started = _when(summary.night_id)
    example = html.escape('recon query "SELECT account, count(*) FROM payments GROUP BY account"')
    consolidated = (
        "<p>Consolidated warehouse (every table with an <code>account</code> column): "
        f"<code>{html.escape(str(summary.consolidated))}</code> — <code>{example}</code></p>"
        if summary.consolidated
        else ""
    )
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>All accounts · night {html.escape(started)}: {html.escape(summary.status)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem; color: #1f2328; }}
table {{ border-collapse: collapse; }}
th, td {{ border-bottom: 1px solid #d0d7de; padding: .4rem .8rem; text-align: left;
         vertical-align: top; }}
th {{ background: #f6f8fa; }}
h1 {{ font-size: 1.5rem; }}
td.risk {{ white-space: nowrap; }}
</style></head><body>
<h1>Payments reconciliation, all accounts · night of {html.escape(started)}:
<span style="color:{colour}">{html.escape(summary.status)}</span> (exit {summary.exit_code})</h1>
<p>{len(rows)} account(s) · night <code>{html.escape(summary.night_id)}</code> · generated
{generated}. Click an account for its report. Amounts at risk: the error and warn checks'
findings per currency, never summed across currencies (a payment two checks flag counts in
both); each account's report has them per check.</p>
<table>
<thead><tr><th>account</th><th>status</th><th>run</th><th>completeness</th>
<th>failed calls</th><th>findings open</th><th>amounts at risk</th></tr></thead>
<tbody>
{chr(10).join(body)}
</tbody></table>
{consolidated}
</body></html>
"""
    target = reports_dir / "group.html"
    atomic_write_text(target, page)
    return target
