"""The Jinja environment of the report templates, and the filters they use.

HTML templates (`*.html.j2`) are autoescaped; `report.md.j2` escapes with `md`. Every value
a template writes has its control and bidirectional characters shown as escapes
(`recon.output.visible`): report.html, report.md and close.html alike.

Compiled templates are kept in recon's cache (`$XDG_CACHE_HOME/recon/jinja2`, else
`~/.cache/recon/jinja2`; Jinja's bytecode cache, keyed by each template's source, so an
edited template is compiled again): compiling them cost every night's report ~0.1 CPU-s,
paid again in each account's process. A cache that cannot be read or written is skipped.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from pathlib import Path

from jinja2 import (
    BytecodeCache,
    Environment,
    FileSystemBytecodeCache,
    FileSystemLoader,
    StrictUndefined,
    select_autoescape,
)
from jinja2.bccache import Bucket
from markupsafe import Markup

from recon.money.shown import format_amount, is_iso_currency
from recon.output.visible import visible

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
        bytecode_cache=_bytecode_cache(),
        finalize=_shown,
    )
    env.filters["money"] = format_amount
    env.filters["iso"] = is_iso_currency
    env.filters["md"] = md_escape
    env.filters["num"] = lambda n: "—" if n is None else f"{n:,}"
    env.filters["when"] = _when
    env.filters["wbr"] = _wbr
    env.filters["seconds"] = _seconds
    return env


class _QuietCache(FileSystemBytecodeCache):
    """Jinja's file cache, never failing a report: a cache file that cannot be read or
    written (a full disk, a folder gone, another version's bytes) is compiled again."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError, TypeError):
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _bytecode_cache() -> BytecodeCache | None:
    """The compiled templates' folder in recon's cache, created private; None when it
    cannot be (a read-only home): the templates are then compiled in each process."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    folder = Path(base) / "recon" / "jinja2"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return None
    # the compiled code depends on the environment's options (finalize), not only on the
    # template's source: a new name when they change
    return _QuietCache(str(folder), pattern=f"__recon_{_COMPILED}_%s.cache")


_COMPILED = "v2"  # bump when the Environment's compile options change


def _shown(value: object) -> object:
    """Every value a template writes: text with its control characters (NUL, ESC, a
    right-to-left override) shown as escapes, never obeyed by a browser or a terminal;
    markup recon made (charts, the explorer's JSON) as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value, keep_breaks=True)
    return value


_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|])")


def md_escape(value: object) -> str:
    """Text safe inside a Markdown table cell: one line, markup characters escaped."""
    if value is None:
        return ""
    text = " ".join(str(value).split())
    return _MD_SPECIAL.sub(r"\\\1", text)


def _wbr(name: object) -> Markup:
    """An identifier that may break after its underscores (long check names in narrow cells)."""
    return Markup("_<wbr>").join(visible(str(name)).split("_"))


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
