"""The Slices view's chart of one scorer's worst values, drawn as one inline SVG: a horizontal
bar per value at its mean, its 95% interval (clipped to the scorer's range) as a whisker, n in
the label, the worst at the top.

Not a plotly figure: it was the experiment page's only one, and the first draw of it mounted
plotly.js in the browser (about 1 s of the browser's CPU at 817 items: a chart picked after a
slice took 0.99-1.14 s the first time, 0.26-0.29 s later; bench/browser_pages.py). Every text
goes through `svg_text`: a value holding `<b>` or `<a href>` shows those characters."""

from __future__ import annotations

import math
from collections.abc import Sequence

import streamlit as st

from core.service.views import SliceBar
from pages.ui.text import shortened, show_svg, svg_text

__all__ = ["render_slice_chart", "slice_chart_svg"]

WIDTH = 760
"""The chart's width in SVG units (it scales to the page's width)."""
_LABEL_W, _RIGHT, _TOP, _ROW, _AXIS = 260, 20, 12, 26, 46
"""The labels' column, the right margin, the top margin, a value's row, the axis below."""
_BAR = "#4c78a8"
_LABEL_LIMIT = 32
"""Characters of a value shown in its label, before its n (the whole in its tooltip)."""


def _interval(bar: SliceBar) -> str:
    if bar.low is None or bar.high is None:
        return "no interval"
    return f"95% interval {bar.low:.3f}–{bar.high:.3f}"


def slice_chart_svg(
    bars: Sequence[SliceBar], bounds: tuple[float, float], scorer_id: str
) -> str | None:
    """One SVG of `bars` (`worst_values`), on an axis spanning the scorer's range `bounds`;
    None without a bar."""
    if not bars:
        return None
    low, high = bounds
    span = high - low if high > low else 1.0
    plot_w = WIDTH - _LABEL_W - _RIGHT
    height = _TOP + _ROW * len(bars) + _AXIS

    def x(value: float) -> float:
        return _LABEL_W + plot_w * (min(max(value, low), low + span) - low) / span

    parts: list[str] = []
    for row, bar in enumerate(bars):
        top = _TOP + row * _ROW
        middle = top + _ROW / 2
        label = f"{bar.value} (n={bar.scored})"
        tip = f"{label}: mean {bar.mean:.3f}, {_interval(bar)}"
        parts.append(
            f'<text x="{_LABEL_W - 8}" y="{middle + 4:.1f}" font-size="12" text-anchor="end" '
            f'fill="currentColor"><title>{svg_text(label)}</title>'
            f"{svg_text(f'{shortened(bar.value, _LABEL_LIMIT)} (n={bar.scored})')}</text>"
        )
        width = x(bar.mean) - x(low) if math.isfinite(bar.mean) else 0.0
        parts.append(
            f'<rect x="{_LABEL_W}" y="{top + 5}" width="{width:.1f}" height="{_ROW - 10}" '
            f'fill="{_BAR}"><title>{svg_text(tip)}</title></rect>'
        )
        if bar.low is not None and bar.high is not None:
            left, right = x(bar.low), x(bar.high)
            parts.append(
                f'<path class="interval" d="M{left:.1f} {middle:.1f}H{right:.1f}'
                f"M{left:.1f} {middle - 5:.1f}V{middle + 5:.1f}"
                f'M{right:.1f} {middle - 5:.1f}V{middle + 5:.1f}" stroke="currentColor" '
                f'stroke-width="1.5" fill="none"><title>{svg_text(tip)}</title></path>'
            )
    base = _TOP + _ROW * len(bars)
    parts.append(
        f'<line x1="{_LABEL_W}" y1="{base}" x2="{_LABEL_W + plot_w}" y2="{base}" stroke="#999"/>'
    )
    for tick in (low, low + span / 2, low + span):
        parts.append(
            f'<text x="{x(tick):.1f}" y="{base + 16}" font-size="11" text-anchor="middle" '
            f'fill="currentColor">{tick:g}</text>'
        )
    parts.append(
        f'<text x="{_LABEL_W + plot_w / 2}" y="{base + 36}" font-size="11" text-anchor="middle" '
        'fill="currentColor">mean score (95% t-interval)</text>'
    )
    title = svg_text(f"{scorer_id}: mean score per value, worst first")
    return (
        f'<svg class="slice-chart" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'viewBox="0 0 {WIDTH} {height}" width="100%" '
        f'style="max-width:{WIDTH}px;font-family:sans-serif" aria-label="{title}">'
        f"<title>{title}</title>{''.join(parts)}</svg>"
    )


def render_slice_chart(
    bars: Sequence[SliceBar], bounds: tuple[float, float], scorer_id: str
) -> None:
    """The chart, or a note when the scorer scored no value."""
    svg = slice_chart_svg(bars, bounds, scorer_id)
    if svg is None:
        st.caption("This scorer has no score in any value.")
        return
    show_svg(svg, "slice-chart-box")
