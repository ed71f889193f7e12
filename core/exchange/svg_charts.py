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

import numpy as np
import pandas as pd

__all__ = ["PALETTE", "bars_svg", "histograms_of", "histograms_svg", "usage_svgs"]

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


def histograms_svg(items: pd.DataFrame, scorer_ids: Sequence[str]) -> str:
    """One small histogram per scorer (10 bins over 0..1, widened when a score falls outside),
    titled with the scorer id, the count scored and the mean; a note when nothing is scored."""
    present = [s for s in scorer_ids if s in items.columns]
    return histograms_of({s: items[s].dropna().to_numpy(dtype=float) for s in present}, present)


def histograms_of(scores: Mapping[str, np.ndarray], scorer_ids: Sequence[str]) -> str:
    """`histograms_svg` of each scorer's scores given as an array (NaN left out), for the
    scorers of `scorer_ids` that have an entry."""
    charts = []
    for scorer_id in [s for s in scorer_ids if s in scores]:
        scores_of = scores[scorer_id]
        if scores_of.size == 0:
            charts.append(f'<p class="note">{_e(scorer_id)}: no scores.</p>')
            continue
        low, high = min(0.0, float(scores_of.min())), max(1.0, float(scores_of.max()))
        counts, edges = np.histogram(scores_of, bins=_BINS, range=(low, high))
        title = f"{scorer_id} ({scores_of.size} scored, mean {scores_of.mean():.3f})"
        charts.append(_histogram(title, [int(c) for c in counts], [float(e) for e in edges]))
    if not any(chart.startswith("<svg") for chart in charts):
        return '<p class="note">No scores to chart.</p>'
    return f'<div class="svg-charts" id="chart-scores">{"".join(charts)}</div>'


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


def usage_svgs(usage: pd.DataFrame) -> list[str]:
    """The judge usage charts of a `judge_usage_frame`: tokens by scorer and step (input,
    output), and model calls and attempts by scorer; none without judge executions."""
    if usage.empty:
        return []
    by_step = usage.groupby(["scorer_id", "step"], sort=False)[
        ["input_tokens", "output_tokens"]
    ].sum()
    labels = [f"{scorer} · {step}" for scorer, step in by_step.index]
    tokens = bars_svg(
        "chart-tokens",
        "Judge tokens by scorer and step",
        labels,
        [
            ("input tokens", by_step["input_tokens"].astype(float).tolist()),
            ("output tokens", by_step["output_tokens"].astype(float).tolist()),
        ],
    )
    by_scorer = usage.groupby("scorer_id", sort=False)[["model_calls", "attempts"]].sum()
    calls = bars_svg(
        "chart-calls",
        "Model calls and attempts by scorer",
        [str(s) for s in by_scorer.index],
        [
            ("model calls", by_scorer["model_calls"].astype(float).tolist()),
            ("attempts", by_scorer["attempts"].astype(float).tolist()),
        ],
    )
    return [tokens, calls]
