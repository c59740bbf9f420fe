"""Small inline-SVG charts for the report: no JavaScript, no external assets.

Each function returns markup (an ``<figure>`` holding an ``<svg>`` and an HTML legend).
Every text that comes from data is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

__all__ = ["Series", "line_chart", "nice_ceiling", "stacked_bar_chart"]

PALETTE = (
    "#2563eb",
    "#059669",
    "#d97706",
    "#7c3aed",
    "#db2777",
    "#0891b2",
    "#65a30d",
    "#9f1239",
)

_W, _H = 560, 230
_LEFT, _RIGHT, _TOP, _BOTTOM = 52, 14, 14, 46


@dataclass(frozen=True)
class Series:
    label: str
    color: str
    values: Sequence[int]


def nice_ceiling(value: int) -> int:
    """The smallest 1, 2 or 5 times 10^k that is ≥ `value` (at least 1)."""
    if value <= 1:
        return 1
    exp = int(10 ** math.floor(math.log10(value)))
    for step in (1, 2, 5, 10):
        if step * exp >= value:
            return step * exp
    return 10 * exp  # pragma: no cover


def _axis_max(peak: int) -> int:
    """Top of the y axis: four equal steps, each a 1/2/5 x 10^k, so every tick is whole."""
    return 4 * nice_ceiling(math.ceil(peak / 4))


def _fmt(n: float) -> str:
    return f"{n:.1f}".rstrip("0").rstrip(".")


def _axes(labels: Sequence[str], y_max: int, plot_w: float, plot_h: float) -> list[str]:
    parts: list[str] = []
    for i in range(5):
        value = y_max * i / 4
        y = _TOP + plot_h - plot_h * i / 4
        parts.append(
            f'<line x1="{_LEFT}" x2="{_LEFT + plot_w:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
            f'class="grid"/>'
            f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
            f"{round(value):,}</text>"
        )
    n = len(labels)
    if n:
        every = max(1, math.ceil(n / 10))
        slot = plot_w / n
        for i, label in enumerate(labels):
            if i % every and i != n - 1:
                continue
            x = _LEFT + slot * (i + 0.5)
            parts.append(
                f'<text x="{x:.1f}" y="{_TOP + plot_h + 16:.1f}" text-anchor="middle" '
                f'class="tick">{escape(label)}</text>'
            )
    parts.append(
        f'<line x1="{_LEFT}" x2="{_LEFT + plot_w:.1f}" y1="{_TOP + plot_h:.1f}" '
        f'y2="{_TOP + plot_h:.1f}" class="axis"/>'
    )
    return parts


def _legend(series: Sequence[Series]) -> str:
    items = "".join(
        f'<li><span class="swatch" style="background:{escape(s.color)}"></span>'
        f"{escape(s.label)}</li>"
        for s in series
    )
    return f'<ul class="legend">{items}</ul>'


def _figure(
    title: str, svg_body: str, series: Sequence[Series], empty: bool, width: int, wide: bool
) -> Markup:
    if empty:
        body = (
            f'<svg class="chart" viewBox="0 0 {width} {_H}" role="img" '
            f'aria-label="{escape(title)}: no data yet" xmlns="http://www.w3.org/2000/svg">'
            f'<text x="{width / 2}" y="{_H / 2}" text-anchor="middle" class="empty">'
            "No data yet</text></svg>"
        )
    else:
        body = (
            f'<svg class="chart" viewBox="0 0 {width} {_H}" role="img" '
            f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">{svg_body}</svg>'
        )
    css = "chart-box wide" if wide else "chart-box"
    return Markup(  # noqa: S704 - every data-derived string above is escaped
        f'<figure class="{css}"><figcaption>{escape(title)}</figcaption>{body}'
        f"{_legend(series)}</figure>"
    )


def stacked_bar_chart(
    title: str,
    labels: Sequence[str],
    tooltips: Sequence[str],
    series: Sequence[Series],
    *,
    markers: Sequence[bool] = (),
    grouped: bool = False,
    width: int = _W,
    wide: bool = False,
) -> Markup:
    """One bar per label, segments stacked in `series` order (side by side if `grouped`).

    `markers[i]` true draws a small warning triangle under bar i (an incomplete night).
    """
    n = len(labels)
    if grouped:
        peak = max((v for s in series for v in s.values), default=0)
    else:
        peak = max((sum(s.values[i] for s in series) for i in range(n)), default=0)
    y_max = _axis_max(peak)
    plot_w, plot_h = width - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    parts = _axes(labels, y_max, plot_w, plot_h)
    slot = plot_w / n if n else plot_w
    bar_w = max(2.0, min(28.0, slot * 0.7))
    seg_w = bar_w / len(series) if grouped and series else bar_w
    floor = float(_TOP + plot_h)
    for i in range(n):
        x = _LEFT + slot * i + (slot - bar_w) / 2
        base = floor
        detail = ", ".join(f"{s.label} {s.values[i]:,}" for s in series)
        for k, s in enumerate(series):
            v = s.values[i]
            if v <= 0:
                continue
            h = plot_h * v / y_max
            if grouped:
                left, top = x + k * seg_w, floor - h
            else:
                base -= h
                left, top = x, base
            parts.append(
                f'<rect x="{left:.1f}" y="{top:.1f}" width="{seg_w:.1f}" height="{h:.1f}" '
                f'fill="{escape(s.color)}"><title>{escape(tooltips[i])}: {escape(detail)}'
                "</title></rect>"
            )
        if i < len(markers) and markers[i]:
            cx, cy = x + bar_w / 2, _TOP + plot_h + 28
            parts.append(
                f'<path d="M{cx - 5:.1f},{cy + 4:.1f} L{cx:.1f},{cy - 5:.1f} '
                f'L{cx + 5:.1f},{cy + 4:.1f} Z" class="marker">'
                f"<title>{escape(tooltips[i])}: not complete</title></path>"
            )
    return _figure(title, "".join(parts), series, n == 0, width, wide)


def line_chart(
    title: str,
    labels: Sequence[str],
    tooltips: Sequence[str],
    series: Sequence[Series],
    *,
    width: int = _W,
    wide: bool = False,
) -> Markup:
    """One line per series, one point per label."""
    n = len(labels)
    y_max = _axis_max(max((v for s in series for v in s.values), default=0))
    plot_w, plot_h = width - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    parts = _axes(labels, y_max, plot_w, plot_h)
    slot = plot_w / n if n else plot_w
    for s in series:
        points = [
            (_LEFT + slot * (i + 0.5), _TOP + plot_h - plot_h * v / y_max)
            for i, v in enumerate(s.values)
        ]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            parts.append(
                f'<polyline points="{path}" fill="none" stroke="{escape(s.color)}" '
                'stroke-width="2" stroke-linejoin="round"/>'
            )
        for i, (x, y) in enumerate(points):
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{_fmt(3 if n <= 31 else 2)}" '
                f'fill="{escape(s.color)}"><title>{escape(tooltips[i])}: {escape(s.label)} '
                f"{s.values[i]:,}</title></circle>"
            )
    return _figure(title, "".join(parts), series, n == 0, width, wide)
