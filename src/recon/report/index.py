"""`reports/index.html` (every run with a report, newest first) and `reports/latest`."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import orjson

from recon.output.spreadsheet import atomic_path, atomic_write_text
from recon.report.templating import environment

__all__ = ["read_data", "render_index"]


def _read_summaries(reports_dir: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for child in reports_dir.iterdir():
        if child.is_symlink() or not child.is_dir():
            continue
        try:
            summary = orjson.loads((child / "summary.json").read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        run = summary.get("run") if isinstance(summary, dict) else None
        if not isinstance(run, dict) or run.get("run_id") != child.name:
            continue
        found.append(summary)
    found.sort(key=lambda s: (str(s["run"].get("started_at") or ""), s["run"]["run_id"]))
    found.reverse()
    return found


def _point_latest(reports_dir: Path, run_id: str) -> None:
    latest = reports_dir / "latest"
    tmp = reports_dir / f".latest.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    try:
        tmp.symlink_to(run_id, target_is_directory=True)
        os.replace(tmp, latest)
    except OSError:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        if latest.is_dir() and not latest.is_symlink():
            return  # someone put a real folder there; leave it alone
        atomic_write_text(latest, run_id + "\n")


def render_index(
    reports_dir: Path, *, account: str | None = None, group_page: str | None = None
) -> Path:
    """Rewrite `reports_dir/index.html` (runs, newest first) and point `latest` at the newest;
    `account` (one of `[accounts]`) names it, `group_page` (a relative link) is linked."""
    summaries = _read_summaries(reports_dir)
    read = [s for s in summaries if read_data(s)] or summaries
    latest = read[0]["run"]["run_id"] if read else None
    html = (
        environment()
        .get_template("index.html.j2")
        .render(
            runs=summaries,
            read_data=read_data,
            latest=latest,
            account=account,
            group_page=group_page,
        )
    )
    target = reports_dir / "index.html"
    with atomic_path(target) as tmp:
        tmp.write_text(html, encoding="utf-8")
    if latest is not None:
        _point_latest(reports_dir, latest)
    return target


def read_data(summary: dict[str, Any]) -> bool:
    """Whether the night of `summary` read any page: a night aborted before its first page
    (a refused key) is listed, but `latest` stays on the last night that read data."""
    if summary["run"].get("status") != "failed":
        return True
    resources = summary.get("resources") or []
    return any(isinstance(r, dict) and r.get("pages") for r in resources)
