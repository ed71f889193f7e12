"""The experiment page's Distributions view: each scorer's score histogram, from the bins the
database counted, drawn as one inline SVG in small multiples, two a row.

Not a plotly figure: opening the view mounted plotly.js and built one figure of five subplots
in the browser, a quarter to half a second of its work on each visit (bench/browser_pages.py);
an SVG is one element the browser lays out at once. Each bar's tooltip (an SVG `<title>`)
gives its score range and count, as plotly's hover did. Names are entity-escaped: an id holding
`<b>` or `<a href>` is shown as those characters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from core.records import ScoreHistogram
from pages.ui.text import shortened, show_svg
from pages.ui.text import svg_text as _e

__all__ = ["histograms_svg", "render_histograms"]

PANEL_WIDTH, PANEL_HEIGHT = 460, 230
"""One scorer's panel in SVG units (the SVG scales to the page's width)."""
_LEFT, _RIGHT, _TOP, _BOTTOM = 46, 12, 34, 40
"""Margins inside a panel: the count axis, the title, the score axis."""
_BAR = "#4c78a8"
_TITLE_LIMIT = 60
"""Characters of a scorer's title shown (the whole in its tooltip)."""


def _title(histogram: ScoreHistogram, mean: float | None) -> str:
    shown = "" if mean is None else f", mean {mean:.3f}"
    return f"{histogram.scorer_id} ({sum(histogram.counts):,} scored{shown})"


def _panel(histogram: ScoreHistogram, mean: float | None, x: float, y: float) -> str:
    """One scorer's histogram at (`x`, `y`): its title, bars with tooltips, and both axes."""
    counts, edges = histogram.counts, histogram.edges
    width = PANEL_WIDTH - _LEFT - _RIGHT
    height = PANEL_HEIGHT - _TOP - _BOTTOM
    tallest = max(counts) or 1
    step = width / len(counts)
    left, base = x + _LEFT, y + _TOP + height
    title = _title(histogram, mean)
    parts = [
        f'<text x="{left}" y="{y + 18}" font-size="13" fill="currentColor">'
        f"<title>{_e(title)}</title>{_e(shortened(title, _TITLE_LIMIT))}</text>",
        f'<line x1="{left}" y1="{base}" x2="{left + width}" y2="{base}" stroke="#999"/>',
        f'<text x="{left - 6}" y="{y + _TOP + 4}" font-size="11" text-anchor="end" '
        f'fill="currentColor">{tallest:,}</text>',
        f'<text x="{left - 6}" y="{base}" font-size="11" text-anchor="end" '
        'fill="currentColor">0</text>',
        f'<text x="{left - 38}" y="{y + _TOP + height / 2}" font-size="11" '
        f'fill="currentColor" transform="rotate(-90 {left - 38} {y + _TOP + height / 2})" '
        'text-anchor="middle">items</text>',
        f'<text x="{left + width / 2}" y="{base + 34}" font-size="11" text-anchor="middle" '
        'fill="currentColor">score</text>',
    ]
    for n, count in enumerate(counts):
        bar = height * count / tallest
        parts.append(
            f'<rect x="{left + n * step + 0.5:.1f}" y="{base - bar:.1f}" '
            f'width="{max(step - 1, 0.5):.1f}" height="{bar:.1f}" fill="{_BAR}">'
            f"<title>score {edges[n]:.2f}–{edges[n + 1]:.2f}: {count:,} items</title></rect>"
        )
    for at in (0, len(counts) // 2, len(counts)):
        parts.append(
            f'<text x="{left + at * step:.1f}" y="{base + 16}" font-size="11" '
            f'text-anchor="middle" fill="currentColor">{edges[at]:g}</text>'
        )
    return "".join(parts)


def histograms_svg(
    histograms: Sequence[ScoreHistogram], means: Mapping[str, float | None] | None = None
) -> str | None:
    """One SVG of every scorer's histogram that counted a score, two a row, titled with the
    scorer's id, the count scored and its mean (`means`); None when none counted any."""
    shown = [h for h in histograms if sum(h.counts)]
    if not shown:
        return None
    means = means or {}
    columns = min(len(shown), 2)
    rows = -(-len(shown) // columns)
    width, height = PANEL_WIDTH * columns, PANEL_HEIGHT * rows
    panels = "".join(
        _panel(
            h, means.get(h.scorer_id), PANEL_WIDTH * (n % columns), PANEL_HEIGHT * (n // columns)
        )
        for n, h in enumerate(shown)
    )
    return (
        f'<svg class="score-histograms" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'viewBox="0 0 {width} {height}" width="100%" '
        f'style="max-width:{width}px;font-family:sans-serif" '
        f'aria-label="Score distribution per scorer">{panels}</svg>'
    )


def render_histograms(
    histograms: Sequence[ScoreHistogram], means: Mapping[str, float | None] | None = None
) -> None:
    """The Distributions view: its heading, then the histograms (or a note without scores)."""
    st.subheader("Score distribution per scorer")
    svg = histograms_svg(histograms, means)
    if svg is None:
        st.caption("No scores yet.")
        return
    show_svg(svg, "score-histograms-box")
    st.caption("Each bar: the items scored in that range (its tooltip gives the range and count).")
