"""Text from the API or the books shown to people: control characters made visible.

A record may carry a right-to-left override, a NUL, a BEL or an escape sequence; the
warehouse keeps it exactly as sent, but a terminal would obey it and a spreadsheet would
hide it. `visible` writes each as an escape (`\\x07`, `\\u202e`) in terminal lines and
spreadsheet cells (CSV keeps tab and line breaks, which it quotes).
"""

from __future__ import annotations

import re

import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
import pyarrow.compute as pc  # type: ignore[import-untyped,unused-ignore]

__all__ = ["visible", "visible_array"]

# C0 (but tab, LF, CR: `keep_breaks`), DEL, C1, and the bidirectional controls.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_ALL = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_BUT_BREAKS = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_BIDI}]")
# The same class for Arrow (RE2), to find the rare column that needs it at C speed.
_RE2_BUT_BREAKS = (
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x{9f}"
    r"\x{61c}\x{200e}\x{200f}\x{202a}-\x{202e}\x{2066}-\x{2069}]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, keep_breaks: bool = False) -> str:
    """`text` with every control character written as an escape (tab and line breaks too,
    unless `keep_breaks`)."""
    return (_BUT_BREAKS if keep_breaks else _ALL).sub(_escape, text)


def visible_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A string column with its control characters escaped (tab and line breaks kept);
    returned as is, without a Python pass, when it holds none."""
    hit = pc.match_substring_regex(arr, _RE2_BUT_BREAKS)
    if not pc.any(hit).as_py():
        return arr
    return pa.array(
        [None if v is None else visible(v, keep_breaks=True) for v in arr.to_pylist()],
        type=arr.type,
    )
