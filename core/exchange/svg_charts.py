"""The HTML report's charts drawn as inline SVG, without plotly.js (issue 21): a small
experiment's report stays well under 1 MB (plotly.js alone is 4.6 MB), the charts draw with
JavaScript off and under the report's Content-Security-Policy, and their colours are this
module's own, never a dashboard theme's (Streamlit's plotly template put `#000001…`
placeholders into figures made inside a Streamlit session).

Every label is escaped with `html.escape` (text from a dataset, a scorer or a judge never
becomes markup). Pure: no Streamlit, no plotly. See docs/architecture.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from core.reporting.table_rows import grouped_sums

__all__ = ["PALETTE", "bars_svg", "histogram_counts", "histograms_of", "score_mean", "usage_svgs"]

PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2")
"""The series colours, in order."""
_BINS = 10
_INK, _MUTED, _GRID = "#1f2328", "#59636e", "#d6d9de"
_FONT = 'font-family="system-ui,sans-serif"'


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _histogram(title: str, counts: Sequence[int], edges: Sequence[float]) -> str:
    width, height, left, bottom, top = 360, 200, 36, 28, 26
    plot_w, plot_h = width - left - 8, height - top - bottom
    peak = max(max(counts, default=0), 1)
    bar_w = plot_w / max(len(counts), 1)
    parts = [
        f'<svg class="svg-chart" role="img" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" {_FONT} font-size="11">',
        f"<title>{_e(title)}</title>",
        f'<text x="{left}" y="14" fill="{_INK}" font-weight="600">{_e(_short(title, 56))}</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        f'stroke="{_GRID}"/>',
        f'<text x="{left - 4}" y="{top + 8}" text-anchor="end" fill="{_MUTED}">{peak}</text>',
        f'<text x="{left - 4}" y="{top + plot_h}" text-anchor="end" fill="{_MUTED}">0</text>',
    ]
    for n, count in enumerate(counts):
        bar_h = plot_h * count / peak
        x = left + n * bar_w
        label = f"{edges[n]:.2f}–{edges[n + 1]:.2f}: {count} items"
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{top + plot_h - bar_h:.1f}" width="{bar_w - 2:.1f}" '
            f'height="{bar_h:.1f}" fill="{PALETTE[0]}"><title>{_e(label)}</title></rect>'
        )
    for n in (0, len(counts)):
        parts.append(
            f'<text x="{left + n * bar_w:.1f}" y="{height - 10}" text-anchor="middle" '
            f'fill="{_MUTED}">{edges[n]:g}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def histograms_of(scores: Mapping[str, Sequence[float]], scorer_ids: Sequence[str]) -> str:
    """One small histogram per scorer of `scorer_ids` that has an entry in `scores` (its scores,
    NaN left out): 10 bins over 0..1, widened when a score falls outside, titled with the
    scorer id, the count scored and the mean; a note when nothing is scored.

    Raises ValueError naming the scorer when one of its scores is infinite."""
    charts = []
    for scorer_id in [s for s in scorer_ids if s in scores]:
        scores_of = scores[scorer_id]
        if not scores_of:
            charts.append(f'<p class="note">{_e(scorer_id)}: no scores.</p>')
            continue
        low, high = min(0.0, min(scores_of)), max(1.0, max(scores_of))
        if not math.isfinite(high - low):  # numpy.histogram refuses such a range too
            raise ValueError(
                f"scorer {scorer_id!r} has a score that is not a finite number "
                f"(between {low} and {high}): the score chart needs finite scores"
            )
        counts, edges = histogram_counts(scores_of, _BINS, low, high)
        title = f"{scorer_id} ({len(scores_of)} scored, mean {score_mean(scores_of):.3f})"
        charts.append(_histogram(title, counts, edges))
    if not any(chart.startswith("<svg") for chart in charts):
        return '<p class="note">No scores to chart.</p>'
    return f'<div class="svg-charts" id="chart-scores">{"".join(charts)}</div>'


def histogram_counts(
    values: Sequence[float], bins: int, low: float, high: float
) -> tuple[list[int], list[float]]:
    """`numpy.histogram(values, bins, range=(low, high))` in plain Python, to the last bit:
    the counts and the `bins + 1` edges (`low + k * step`, the last `high`); a value on an
    inner edge counts in the bin above it, `high` in the last bin; values outside are left out.
    `low` < `high`."""
    step = (high - low) / bins
    edges = [k * step + low for k in range(bins)] + [high]
    counts = [0] * bins
    for value in values:
        if not low <= value <= high:
            continue
        index = min(int((value - low) / (high - low) * bins), bins - 1)
        if value < edges[index]:  # the division can land a ulp off an edge
            index -= 1
        elif value >= edges[index + 1] and index != bins - 1:
            index += 1
        counts[index] += 1
    return counts, edges


def score_mean(values: Sequence[float]) -> float:
    """The mean as NumPy (and pandas) compute it, to the last bit: the sum by NumPy's pairwise
    summation over the values in order, divided by their count (NaN when there is none)."""
    if not values:
        return math.nan
    return (0.0 + _pairwise_sum(values, 0, len(values))) / len(values)


_PAIRWISE_BLOCK = 128


def _pairwise_sum(values: Sequence[float], start: int, count: int) -> float:
    """NumPy's pairwise sum of `values[start:start + count]`: fewer than 8 added in order; up to
    128 in 8 running sums, combined as a tree, then the rest; more split in two halves (the
    first a multiple of 8 long)."""
    if count < 8:
        total = 0.0
        for value in values[start : start + count]:
            total += value
        return total
    if count <= _PAIRWISE_BLOCK:
        lanes = [float(value) for value in values[start : start + 8]]
        end = start + count - count % 8
        for offset in range(start + 8, end, 8):
            for lane in range(8):
                lanes[lane] += values[offset + lane]
        total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + (
            (lanes[4] + lanes[5]) + (lanes[6] + lanes[7])
        )
        for value in values[end : start + count]:
            total += value
        return total
    half = count // 2
    half -= half % 8
    return _pairwise_sum(values, start, half) + _pairwise_sum(values, start + half, count - half)


def bars_svg(
    chart_id: str,
    title: str,
    labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    unit: str = "",
) -> str:
    """Horizontal grouped bars: a row per label, a bar per series (colours from `PALETTE`,
    a legend when there are several), each bar with its value."""
    row_h, bar_gap = 8 + 14 * len(series), 4
    left, width, top = 220, 760, 40
    plot_w = width - left - 90
    height = top + row_h * len(labels) + 16
    peak = max((v for _, values in series for v in values if math.isfinite(v)), default=0.0)
    peak = peak or 1.0
    parts = [
        f'<svg class="svg-chart" id="{_e(chart_id)}" role="img" viewBox="0 0 {width} {height}" '
        f'width="100%" style="max-width:{width}px" {_FONT} font-size="12">',
        f"<title>{_e(title)}</title>",
        f'<text x="0" y="16" fill="{_INK}" font-weight="600">{_e(title)}</text>',
    ]
    if len(series) > 1:
        x = left
        for k, (name, _) in enumerate(series):
            colour = PALETTE[k % len(PALETTE)]
            parts.append(
                f'<rect x="{x}" y="24" width="10" height="10" fill="{colour}"/>'
                f'<text x="{x + 14}" y="33" fill="{_MUTED}">{_e(name)}</text>'
            )
            x += 24 + 8 * len(name)
    for row, label in enumerate(labels):
        y0 = top + row * row_h
        parts.append(
            f'<text x="{left - 8}" y="{y0 + row_h / 2 + 4:.1f}" text-anchor="end" '
            f'fill="{_INK}"><title>{_e(label)}</title>{_e(_short(label, 34))}</text>'
        )
        for k, (name, values) in enumerate(series):
            value = float(values[row]) if math.isfinite(values[row]) else 0.0
            y = y0 + 4 + k * 14
            bar_w = plot_w * value / peak
            colour = PALETTE[k % len(PALETTE)]
            shown = f"{value:,.0f}{unit}" if value >= 10 else f"{value:,.4g}{unit}"
            parts.append(
                f'<rect x="{left}" y="{y}" width="{bar_w:.1f}" height="{14 - bar_gap}" '
                f'fill="{colour}"><title>{_e(f"{label} · {name}: {shown}")}</title></rect>'
                f'<text x="{left + bar_w + 4:.1f}" y="{y + 9}" fill="{_MUTED}" '
                f'font-size="10">{_e(shown)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def usage_svgs(usage: Sequence[Mapping[str, Any]]) -> list[str]:
    """The judge usage charts of judge executions given as rows (`usage_columns`' names, one
    row per execution or per group of them summed): tokens by scorer and step (input, output),
    and model calls and attempts by scorer; none without judge executions."""
    if not usage:
        return []
    by_step = grouped_sums(usage, ("scorer_id", "step"), ("input_tokens", "output_tokens"))
    tokens = bars_svg(
        "chart-tokens",
        "Judge tokens by scorer and step",
        [f"{scorer} · {step}" for scorer, step in by_step],
        [
            ("input tokens", [float(sums[0]) for sums in by_step.values()]),
            ("output tokens", [float(sums[1]) for sums in by_step.values()]),
        ],
    )
    by_scorer = grouped_sums(usage, ("scorer_id",), ("model_calls", "attempts"))
    calls = bars_svg(
        "chart-calls",
        "Model calls and attempts by scorer",
        [str(scorer) for (scorer,) in by_scorer],
        [
            ("model calls", [float(sums[0]) for sums in by_scorer.values()]),
            ("attempts", [float(sums[1]) for sums in by_scorer.values()]),
        ],
    )
    return [tokens, calls]
