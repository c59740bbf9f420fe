"""Write `reports/<run_id>/` from the warehouse: summary.json, report.html, report.md,
findings.csv/.parquet, failed_calls.csv, manifest.json; then `reports/index.html` and
`reports/latest`.

Reads only the warehouse tables (never the environment). Every file is written to a
temporary name in its folder and renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]
from markupsafe import Markup

from recon.bank.cash import build_cash_section
from recon.errors import ConfigError
from recon.money.fx import Rates
from recon.money.shown import is_iso_currency, major_scale, with_major_amount
from recon.output.spreadsheet import (
    CsvDialect,
    atomic_write_bytes,
    atomic_write_text,
    write_csv,
    write_csv_batches,
    write_parquet_batches,
)
from recon.report.charts import PALETTE, Series, line_chart, stacked_bar_chart
from recon.report.data import AGING_BUCKETS, ReportData, load_report_data
from recon.report.explore import EXPLORE_MAX, NO_CURRENCY, Explorer, build_explorer, script
from recon.report.headline import books_headline, next_commands
from recon.report.index import render_index
from recon.report.ledger import build_ledger_section
from recon.report.privacy import scrub_table
from recon.report.summary import SCHEMA_VERSION, build_summary
from recon.report.templating import environment
from recon.runid import check_run_id
from recon.warehouse.sql import read_sql

__all__ = ["SCHEMA_VERSION", "ReportPaths", "render_index", "render_report"]

CALLS_SHOWN = 25  # failed calls listed in the headline; all are in failed_calls.csv

# The columns of findings.csv / findings.parquet, in this order: never `raw` or a personal
# field (sql/report/findings.sql also gives `age_days`, for the explorer only). The work
# columns say what the team decided (audit trail; work_note is scrubbed like detail).
FINDINGS_COLUMNS = (
    "run_id",
    "check_name",
    "severity",
    "state",
    "entity",
    "entity_id",
    "currency",
    "amount_minor",
    "issue_type",
    "detail",
    "first_seen_run",
    "finding_key",
    "work_state",
    "owner",
    "work_note",
    "work_reason",
    "lapsed_reason",
)
FAILED_CALL_COLUMNS = (
    "method, path, query, http_status AS status, error, message, request_id, attempts, "
    "request_ids, resource, call_id, attempted_at"
)


@dataclass(frozen=True)
class ReportPaths:
    """Where `render_report` wrote each file."""

    folder: Path
    summary_json: Path
    report_html: Path
    report_md: Path
    findings_csv: Path
    findings_parquet: Path
    failed_calls_csv: Path
    manifest_json: Path
    index_html: Path
    latest: Path


def _duration(started: str, finished: str | None) -> str | None:
    if not finished:
        return None
    seconds = int(
        (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
    )
    minutes, sec = divmod(max(seconds, 0), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {sec:02d} s"


# ---------------------------------------------------------------------------------------
# the view model shared by report.html and report.md

_STATUS_WORDS = {
    "complete": "Complete",
    "incomplete": "Incomplete",
    "failed": "Failed",
    "running": "Still running",
}


def _headline(data: ReportData) -> str:
    run = data.run
    counts = data.check_status_counts
    n_calls = len(data.failed_calls)
    parts: list[str] = []
    if run.status == "complete":
        parts.append("All data was fetched: the results below cover everything the API lists.")
    elif run.status == "incomplete":
        bad = [r.resource for r in data.resources if r.status != "complete"]
        parts.append(
            f"Data is incomplete: {n_calls} API call{'s' if n_calls != 1 else ''} failed for "
            f"good after retries"
            + (f" ({', '.join(bad)} not complete)" if bad else "")
            + ". Checks that need the missing data were not evaluated; "
            "quote the request ids below to the payments provider."
        )
    elif run.status == "failed" and read_nothing(data):
        parts.append(
            "The run failed before it read anything from the API: below are its failed "
            "calls and what it did not fetch, and no figure of an earlier night."
        )
    elif run.status == "failed":
        parts.append("The run failed; the results below are partial.")
    else:
        parts.append("The run has not finished; the results below are partial.")
    parts.append(
        f"{counts['failed']} check{'s' if counts['failed'] != 1 else ''} found problems, "
        f"{counts['passed']} passed, {counts['not_evaluated']} not evaluated, "
        f"{counts['errored']} errored."
    )
    return " ".join(parts)


def _trend_charts(data: ReportData) -> list[Markup]:
    points = data.trend
    labels = [p.started_at[5:10] for p in points]
    tips = [f"{p.run_id} ({p.started_at[:10]}, {p.status})" for p in points]
    markers = [p.status != "complete" for p in points]
    severities = [("error", "Errors", "#dc2626"), ("warn", "Warnings", "#f59e0b")]
    severities.append(("info", "Info", "#94a3b8"))
    findings = stacked_bar_chart(
        "Open findings per night, by severity",
        labels,
        tips,
        [
            Series(label, color, [p.open_by_severity.get(key, 0) for p in points])
            for key, label, color in severities
        ],
        markers=markers,
    )
    moves = stacked_bar_chart(
        "New and resolved findings per night",
        labels,
        tips,
        [
            Series("New", "#2563eb", [p.new for p in points]),
            Series("Resolved", "#059669", [p.resolved for p in points]),
        ],
        markers=markers,
        grouped=True,
    )
    resources = sorted({r for p in points for r in p.records_by_resource})
    records = line_chart(
        "Records per resource per night",
        labels,
        tips,
        [
            Series(r, PALETTE[i % len(PALETTE)], [p.records_by_resource.get(r, 0) for p in points])
            for i, r in enumerate(resources)
        ],
        width=1160,
        wide=True,
    )
    return [findings, moves, records]


def read_nothing(data: ReportData) -> bool:
    """A night that failed before a single page came: every figure would be an older one."""
    return data.run.status == "failed" and not any(r.pages for r in data.resources)


def _view(data: ReportData, summary: dict[str, Any], top_n: int) -> dict[str, Any]:
    currencies = data.currencies
    amounts = [
        {
            "check": c,
            "cells": {a.currency: a for a in c.amounts},
        }
        for c in data.checks
        if c.amounts
    ]
    aging: list[dict[str, Any]] = []
    for currency in sorted({a.currency for a in data.aging}, key=lambda c: (c is None, c or "")):
        rows = {a.bucket: a for a in data.aging if a.currency == currency}
        aging.append(
            {
                "currency": currency,
                "buckets": rows,
                "extra": [a for b, a in rows.items() if b not in AGING_BUCKETS],
                "invoices": sum(a.invoices for a in rows.values()),
                "amount_minor": sum(a.amount_minor for a in rows.values()),
            }
        )
    incomplete_resources = [r for r in data.resources if r.status != "complete"]
    return {
        "read_nothing": read_nothing(data),
        "data": data,
        "run": data.run,
        "summary": summary,
        "status_word": _STATUS_WORDS.get(data.run.status, data.run.status.title()),
        "headline": _headline(data),
        "duration": _duration(data.run.started_at, data.run.finished_at),
        "counts": data.check_status_counts,
        "currencies": currencies,
        "iso_currencies": [c for c in currencies if is_iso_currency(c)],
        "other_currencies": [c for c in currencies if not is_iso_currency(c)],
        "amounts": amounts,
        "aging": aging,
        "aging_buckets": AGING_BUCKETS,
        "incomplete_resources": incomplete_resources,
        "top_n": top_n,
        "calls_shown": CALLS_SHOWN,
        "is_iso": is_iso_currency,
    }


# ---------------------------------------------------------------------------------------
# files


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _arrow(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> pa.Table:
    rel = con.sql(sql, params=params)
    assert rel is not None
    table: pa.Table = rel.to_arrow_table()
    return table


#: Findings read from DuckDB, scrubbed and written per batch (report files stream, issue 38).
FINDINGS_BATCH = 50_000


@dataclass
class FindingsStream:
    """The run's findings as export batches (`reader`), and the schema of the rows as read
    (`source_schema`: with `age_days`, for the explorer)."""

    reader: pa.RecordBatchReader
    source_schema: pa.Schema


WORK_COLUMNS = ("work_state", "owner", "work_note", "work_reason", "lapsed_reason")
_UNRESOLVED = ("new", "open", "reopened")


def _worked(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, tuple[Any, ...]]:
    """Per finding key, its work columns where they are not the default (nobody worked it):
    sql/report/finding_work.sql, streamed. Few findings are worked; a bulk action on a
    million makes this a million small tuples, within the commands' budget."""
    worked: dict[str, tuple[Any, ...]] = {}
    reader = con.sql(read_sql("report/finding_work.sql"), params={"run_id": run_id})
    for batch in reader.to_arrow_reader(FINDINGS_BATCH):
        columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
        for key, *values in zip(*columns, strict=True):
            worked[key] = tuple(values)
    return worked


def _findings_stream(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    personal: dict[str, list[str]],
    *,
    keep: list[pa.RecordBatch] | None,
) -> FindingsStream:
    """The run's findings in batches, each with its work columns (the default, or what
    sql/report/finding_work.sql read first), scrubbed of personal data, appended to `keep`
    (when given) as read, and yielded as the export's columns with the amount in currency
    units at one scale for the whole run. One DuckDB query at a time: the order is the
    rowids sorted (sql/report/findings_order.sql: keys only, spilling past DuckDB's limit;
    8 bytes a finding kept), then sql/report/findings.sql reads `FINDINGS_BATCH` of them at
    a time, in order; Python holds one batch."""
    p = {"run_id": run_id}
    codes = [c for (c,) in con.execute(read_sql("report/finding_currencies.sql"), p).fetchall()]
    scale = major_scale(codes)
    worked = _worked(con, run_id)
    order = con.sql(read_sql("report/findings_order.sql"), params=p).to_arrow_table()
    rids = order.column("rid").combine_chunks()  # 8 bytes a finding: the order, kept whole
    source_schema = _batch_of(con, rids.slice(0, 0), 0).schema

    def with_work(batch: pa.RecordBatch) -> pa.Table:
        table = pa.Table.from_batches([batch], schema=source_schema)
        rows = [
            worked.get(key) or ("open" if state in _UNRESOLVED else None, None, None, None, None)
            for key, state in zip(
                table["finding_key"].to_pylist(), table["state"].to_pylist(), strict=True
            )
        ]
        for i, name in enumerate(WORK_COLUMNS):
            table = table.append_column(name, pa.array([r[i] for r in rows], pa.string()))
        return scrub_table(table, ("detail", "work_note"), personal)

    def export(table: pa.Table) -> pa.Table:
        return with_major_amount(table.select(list(FINDINGS_COLUMNS)), scale=scale)

    def batches() -> Iterator[pa.RecordBatch]:
        for start in range(0, len(rids), FINDINGS_BATCH):
            read = _batch_of(con, rids.slice(start, FINDINGS_BATCH), start)
            if not read.num_rows:
                continue
            table = with_work(read.combine_chunks().to_batches()[0])
            if keep is not None:
                keep.extend(table.to_batches())
            yield from export(table).to_batches()

    full = with_work(_empty(source_schema))
    return FindingsStream(
        pa.RecordBatchReader.from_batches(export(full).schema, batches()), full.schema
    )


def _batch_of(con: duckdb.DuckDBPyConnection, rids: pa.Array, start: int) -> pa.Table:
    """The findings at `rids` (rowids, in the report's order from position `start`), read
    with sql/report/findings.sql in that order."""
    positions = pa.array(range(start, start + len(rids)), pa.int64())
    con.register("report_batch", pa.table({"pos": positions, "rid": rids}))
    try:
        return _arrow(con, read_sql("report/findings.sql"), {})
    finally:
        con.unregister("report_batch")


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=schema)


def render_report(
    con: duckdb.DuckDBPyConnection,
    *,
    run_id: str,
    reports_dir: Path,
    top_n: int = 200,
    explore_max: int = EXPLORE_MAX,
    rates: Rates | None = None,
    csv_dialect: CsvDialect = "excel",
    account: str | None = None,
    group_page: Path | None = None,
) -> ReportPaths:
    """Write the report folder of `run_id` under `reports_dir` and refresh the index.

    Reads only the warehouse tables through `con` (read-only use). report.html embeds every
    finding for its explorer up to `explore_max` findings; past that it says where they are
    and lists the `top_n` largest per check and currency. Raises ConfigError for a run id
    that is unknown or unusable as a folder name. `account` (one of `[accounts]`) is named in
    every file's title and in summary.json; `group_page` is linked from its report and index.
    """
    check_run_id(run_id)  # the one run-id rule (recon.warehouse.landing): it names a folder
    if top_n < 1:
        raise ConfigError("top_n", f"must be at least 1, got {top_n}")
    data = load_report_data(con, run_id, top_n, drill_down_above=explore_max)
    folder = reports_dir / run_id
    folder.mkdir(parents=True, exist_ok=True)
    generated_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    p = {"run_id": run_id}

    calls = _arrow(
        con,
        f"SELECT {FAILED_CALL_COLUMNS} FROM failed_calls WHERE run_id = $run_id "  # noqa: S608
        "ORDER BY attempted_at, call_id",
        p,
    )
    calls = scrub_table(calls, ("query", "error", "message"))
    paths = ReportPaths(
        folder=folder,
        summary_json=folder / "summary.json",
        report_html=folder / "report.html",
        report_md=folder / "report.md",
        findings_csv=folder / "findings.csv",
        findings_parquet=folder / "findings.parquet",
        failed_calls_csv=folder / "failed_calls.csv",
        manifest_json=folder / "manifest.json",
        index_html=reports_dir / "index.html",
        latest=reports_dir / "latest",
    )
    rows: dict[str, int | None] = {}
    # Streamed, one batch at a time (issue 38): DuckDB sorts (spilling past its limit), each
    # batch is scrubbed and written; the explorer keeps its batches only when it embeds them.
    embed = data.findings_total_rows <= explore_max
    kept: list[pa.RecordBatch] = []
    stream = _findings_stream(con, run_id, data.personal, keep=kept if embed else None)
    rows["findings.parquet"] = write_parquet_batches(stream.reader, paths.findings_parquet)
    written = pq.ParquetFile(paths.findings_parquet)
    rows["findings.csv"] = write_csv_batches(
        pa.RecordBatchReader.from_batches(
            written.schema_arrow, written.iter_batches(batch_size=FINDINGS_BATCH)
        ),
        paths.findings_csv,
        dialect=csv_dialect,
    )
    rows["failed_calls.csv"] = write_csv(calls, paths.failed_calls_csv, dialect=csv_dialect)

    ledger = build_ledger_section(con, run_id, folder, csv_dialect)  # Books vs provider
    rows.update(ledger.files)
    from recon.findings.after_sign_off import changed_after_sign_off
    from recon.findings.trail_table import trail_head

    trail = trail_head(con)  # the audit trail's head, written down outside the trail
    after = changed_after_sign_off(con, datetime.now(UTC), run_id)  # frozen months it moved
    summary = build_summary(data, generated_at, ledger, account=account, audit_trail=trail)
    summary["after_sign_off"] = [
        {"period": a.period, "signed_at": a.signed_at.isoformat(), "items": a.items} for a in after
    ]
    env = environment()
    view = _view(data, summary, top_n)
    view["ledger"] = ledger
    view["cash"] = build_cash_section(con, run_id)  # the bank leg (recon.bank)
    view["account"] = account
    view["audit_trail"] = trail
    view["after_sign_off"] = after
    view["books"] = books_headline(con, run_id, ledger_configured=ledger.configured)
    view["next_commands"] = next_commands(account)
    view["group_page"] = _link(group_page, folder)
    atomic_write_text(paths.report_md, env.get_template("report.md.j2").render(**view))
    rows["report.md"] = None
    if embed:
        findings = pa.Table.from_batches(kept, schema=stream.source_schema)
        explorer = build_explorer(findings, data.checks, explore_max, rates)
        del findings, kept
    else:
        explorer = Explorer(
            total=data.findings_total_rows, limit=explore_max, data=None, options={}
        )
    html = env.get_template("report.html.j2").render(
        **view, **_explorer_view(explorer), charts=_trend_charts(data), generated_at=generated_at
    )
    atomic_write_text(paths.report_html, html)
    rows["report.html"] = None
    atomic_write_bytes(paths.summary_json, _json_bytes(summary))
    rows["summary.json"] = None

    manifest = {
        "run_id": run_id,
        "generated_at": generated_at,
        "files": [
            {
                "name": name,
                "bytes": (folder / name).stat().st_size,
                "sha256": _sha256(folder / name),
                "rows": n,
            }
            for name, n in rows.items()
        ],
    }
    atomic_write_bytes(
        paths.manifest_json, orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n"
    )
    render_index(reports_dir, account=account, group_page=_link(group_page, reports_dir))
    return paths


def _link(target: Path | None, folder: Path) -> str | None:
    """`target` relative to `folder` (a report folder copied whole keeps its links)."""
    if target is None:
        return None
    return Path(os.path.relpath(target.resolve(), folder.resolve())).as_posix()


def _explorer_view(explorer: Explorer) -> dict[str, Any]:
    code, digest = script()
    return {
        "explorer": explorer,
        "explore_js": code if explorer.embedded else None,
        "script_hash": digest if explorer.embedded else None,
        "no_currency": NO_CURRENCY,
    }


def _json_bytes(value: Any) -> bytes:
    """Indented JSON; the stdlib writes what orjson cannot (a sum beyond 64 bits)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:
        return json.dumps(value, indent=2, ensure_ascii=False).encode() + b"\n"
