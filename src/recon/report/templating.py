"""The Jinja environment of the report templates, and the filters they use.

HTML templates (`*.html.j2`) are autoescaped; `report.md.j2` escapes with `md`.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from recon.report._money import format_amount, is_iso_currency

__all__ = ["environment", "md_escape"]

_TEMPLATES = Path(__file__).parent / "templates"


@functools.cache
def environment() -> Environment:
    """One environment per process, so templates are compiled once."""
    env = Environment(
        loader=FileSystemLoader(_TEMPLATES),
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["money"] = format_amount
    env.filters["iso"] = is_iso_currency
    env.filters["md"] = md_escape
    env.filters["num"] = lambda n: "—" if n is None else f"{n:,}"
    env.filters["when"] = _when
    env.filters["wbr"] = _wbr
    env.filters["seconds"] = _seconds
    return env


_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|])")


def md_escape(value: object) -> str:
    """Text safe inside a Markdown table cell: one line, markup characters escaped."""
    if value is None:
        return ""
    text = " ".join(str(value).split())
    return _MD_SPECIAL.sub(r"\\\1", text)


def _wbr(name: object) -> Markup:
    """An identifier that may break after its underscores (long check names in narrow cells)."""
    return Markup("_<wbr>").join(str(name).split("_"))


def _when(iso: str | None) -> str:
    if not iso:
        return "—"
    return iso.replace("T", " ").replace("Z", " UTC")


def _seconds(ms: float | None) -> str:
    """A duration in milliseconds for people: `850 ms`, `12.4 s`, `3 min 05 s`, `1 h 02 min`."""
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms:,.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:,.1f} s"
    minutes, sec = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours:,} h {minutes:02d} min"
