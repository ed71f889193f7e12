"""Readable slices (issue 21): the experiment's slices as one value × scorer pivot (n, mean
and its 95% interval clipped to the scorer's range, worst first), one scorer's chart of the
worst values, and Compare's change per slice paired on the same items, with a 95% interval,
a minimum size and Holm's correction for the number of slices compared.

Pure shaping: no Streamlit, no database (the slices come from `core.reporting.slices`, the
pairs from `core.reporting.compare`). See docs/architecture.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.records import SliceScorer, SliceSummary
from core.reporting.compare import Comparison
from core.reporting.slices import NO_VALUE_LABEL, t_interval

__all__ = [
    "CHART_TOP",
    "CORRECTION",
    "MIN_SLICE",
    "PairedSliceChange",
    "SliceBar",
    "holm",
    "paired_slice_changes",
    "paired_slice_frame",
    "slice_pivot",
    "worst_values",
]

MIN_SLICE = 10
"""Paired items a slice needs before its change is tested (smaller: shown, not tested)."""
CHART_TOP = 20
"""Values a scorer's chart draws (`worst_values`): its worst ones."""
CORRECTION = (
    "Holm's step-down correction over the slices tested (each with at least {n} paired items): "
    "a change is flagged only when its adjusted p-value is below 0.05."
)
"""What the page says of the multiple-comparison correction (format with `n=MIN_SLICE`)."""


def _label(value: str) -> str:
    return NO_VALUE_LABEL if value == "" else value


def _clip(value: float | None, bounds: tuple[float, float]) -> float:
    if value is None:
        return math.nan
    return min(max(value, bounds[0]), bounds[1])


# ---- the experiment's pivot ----


def slice_pivot(
    summaries: Sequence[SliceSummary],
    ranges: Mapping[str, tuple[float, float]] | None = None,
) -> pd.DataFrame:
    """One row per slice value, worst first: `value`, `items`, `missing` and `failed` (summed
    over the scorers: runs without a stored result, and failed runs held in memory, empty when
    not known), then per scorer `<id> · n`,
    `<id> · mean`, `<id> · low`, `<id> · high` (the 95% t-interval clipped to the scorer's
    range from `ranges`, 0 to 1 when absent: a mean of 0.9 over 3 items never reaches 1.4).

    Worst first: by the value's lowest mean relative to its scorer's range (values without any
    mean last), ties by more items first."""
    ranges = ranges or {}
    scorer_ids = list(dict.fromkeys(s.scorer_id for summary in summaries for s in summary.scorers))
    rows: list[dict[str, Any]] = []
    keys: list[tuple[bool, float, int]] = []
    for summary in summaries:
        by_id = {s.scorer_id: s for s in summary.scorers}
        failed = [s.failed for s in summary.scorers]
        row: dict[str, Any] = {
            "value": _label(summary.value),
            "items": summary.items,
            "missing": sum(s.missing for s in summary.scorers),
            "failed": None if any(f is None for f in failed) else sum(f or 0 for f in failed),
        }
        shares = []
        for scorer_id in scorer_ids:
            scorer = by_id.get(scorer_id, SliceScorer(scorer_id=scorer_id))
            bounds = ranges.get(scorer_id, (0.0, 1.0))
            row[f"{scorer_id} · n"] = scorer.scored
            row[f"{scorer_id} · mean"] = math.nan if scorer.mean is None else scorer.mean
            row[f"{scorer_id} · low"] = _clip(scorer.low, bounds)
            row[f"{scorer_id} · high"] = _clip(scorer.high, bounds)
            if scorer.mean is not None:
                width = (bounds[1] - bounds[0]) or 1.0
                shares.append((scorer.mean - bounds[0]) / width)
        rows.append(row)
        keys.append((not shares, min(shares) if shares else 0.0, -summary.items))
    order = sorted(range(len(rows)), key=lambda k: keys[k])
    columns = ["value", "items", "missing", "failed"] + [
        f"{s} · {part}" for s in scorer_ids for part in ("n", "mean", "low", "high")
    ]
    frame = pd.DataFrame([rows[k] for k in order], columns=columns)
    return frame.astype({"failed": "Int64"}).reset_index(drop=True)


@dataclass(frozen=True)
class SliceBar:
    """One value's bar in a scorer's chart of its worst values (`worst_values`)."""

    value: str
    """The value's label (NO_VALUE_LABEL for items without one)."""
    scored: int
    """The value's items with a score of the scorer."""
    mean: float
    """Their mean score."""
    low: float | None
    """The 95% t-interval's low end, clipped to the scorer's range (None: no interval)."""
    high: float | None
    """Its high end, clipped likewise."""


def worst_values(
    summaries: Sequence[SliceSummary],
    scorer_id: str,
    bounds: tuple[float, float] = (0.0, 1.0),
    *,
    top: int = CHART_TOP,
) -> list[SliceBar]:
    """One scorer's `top` worst values (lowest mean first; the larger value first on a tie),
    each with its mean and its 95% t-interval clipped to `bounds`: what its chart draws.
    Values without a score of the scorer are left out."""
    entries = []
    for summary in summaries:
        scorer = next((s for s in summary.scorers if s.scorer_id == scorer_id), None)
        if scorer is not None and scorer.mean is not None:
            entries.append((summary, scorer))
    entries.sort(key=lambda pair: (pair[1].mean, -pair[0].items))
    return [
        SliceBar(
            value=_label(summary.value),
            scored=scorer.scored,
            mean=float(scorer.mean or 0.0),
            low=_clipped(scorer.low, bounds),
            high=_clipped(scorer.high, bounds),
        )
        for summary, scorer in entries[:top]
    ]


def _clipped(value: float | None, bounds: tuple[float, float]) -> float | None:
    clipped = _clip(value, bounds)
    return None if math.isnan(clipped) else clipped


# ---- Compare: paired change per slice ----


@dataclass(frozen=True)
class PairedSliceChange:
    """One scorer's change over the paired items of one slice value, baseline to candidate."""

    value: str
    """The slice value ("" for no value)."""
    scorer_id: str
    """The scorer (run on both sides)."""
    n: int
    """Paired items of the value scored on both sides: the differences are over these."""
    baseline_mean: float
    """The baseline's mean over those items (NaN when none)."""
    candidate_mean: float
    """The candidate's mean over the same items (NaN when none)."""
    change: float
    """Mean of (candidate − baseline) over them (NaN when none)."""
    low: float
    """Lower end of the 95% t-interval of `change` (NaN under two pairs)."""
    high: float
    """Upper end of that interval."""
    tested: bool
    """True when the slice has at least the minimum size and was tested."""
    p_value: float
    """Two-sided paired t-test p-value (NaN when not tested)."""
    adjusted_p: float
    """Holm-adjusted p-value over every tested slice of every scorer (NaN when not tested)."""

    @property
    def significant(self) -> bool:
        """Tested, and the adjusted p-value is below 0.05."""
        return self.tested and self.adjusted_p < 0.05


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the k-th smallest p times
    (m − k + 1), made non-decreasing, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda k: p_values[k])
    adjusted = [1.0] * m
    running = 0.0
    for rank, k in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[k]))
        adjusted[k] = running
    return adjusted


def _paired_t(differences: np.ndarray) -> tuple[float, float, float]:
    """(low, high, p) of the mean difference: the 95% t-interval and the two-sided paired
    t-test; identical differences give a zero-width interval and p 1 (all 0) or 0."""
    from scipy.stats import t

    n = differences.size
    mean = float(differences.mean())
    sd = float(differences.std(ddof=1))
    if sd == 0.0:
        return mean, mean, 1.0 if mean == 0.0 else 0.0
    interval = t_interval(mean, sd, n)
    assert interval is not None  # n >= 2 here
    statistic = mean / (sd / math.sqrt(n))
    p = float(2 * t.sf(abs(statistic), n - 1))
    return interval[0], interval[1], p


def paired_slice_changes(
    comparison: Comparison, column: str, *, min_size: int = MIN_SLICE
) -> list[PairedSliceChange]:
    """Per value of the baseline items' metadata `column` and per scorer of both sides: the
    change of the mean over the paired items scored on both sides (the same items, as the
    main table), its 95% t-interval, and, for slices of at least `min_size` pairs, a paired
    t-test with Holm's correction over all the tested (value, scorer) pairs.

    Ordered: significant drops first, then the other tested slices by change (largest drop
    first), then the slices too small to test. Raises ValueError when no paired item has the
    column."""
    baseline, candidate = comparison._baseline, comparison._candidate
    paired = comparison.pairing.paired_ids
    values: dict[str, str] = {}
    found = False
    for item_id in paired:
        metadata = baseline.items[item_id].metadata
        found = found or column in metadata
        raw = metadata.get(column)
        values[item_id] = "" if raw is None else str(raw)
    if paired and not found:
        raise ValueError(f"No paired item has the metadata column {column!r}")
    scorer_ids = [
        s for s in comparison.scorer_ids if s in baseline.outcomes and s in candidate.outcomes
    ]
    drafts: list[dict[str, Any]] = []
    for scorer_id in scorer_ids:
        before, after = baseline.scores(scorer_id), candidate.scores(scorer_id)
        groups: dict[str, list[str]] = {}
        for item_id in paired:
            if item_id in before and item_id in after:
                groups.setdefault(values[item_id], []).append(item_id)
        for value, ids in groups.items():
            a = np.array([before[i] for i in ids], dtype=float)
            b = np.array([after[i] for i in ids], dtype=float)
            differences = b - a
            low, high, p = math.nan, math.nan, math.nan
            if len(ids) >= 2:
                low, high, p = _paired_t(differences)
            big_enough = len(ids) >= max(min_size, 2)
            drafts.append(
                {
                    "value": value,
                    "scorer_id": scorer_id,
                    "n": len(ids),
                    "baseline_mean": float(a.mean()),
                    "candidate_mean": float(b.mean()),
                    "change": float(differences.mean()),
                    "low": low,
                    "high": high,
                    "tested": big_enough,
                    "p_value": p if big_enough else math.nan,
                }
            )
    tested = [d for d in drafts if d["tested"]]
    for draft, adjusted in zip(tested, holm([d["p_value"] for d in tested]), strict=True):
        draft["adjusted_p"] = adjusted
    changes = [PairedSliceChange(**{"adjusted_p": math.nan, **d}) for d in drafts]
    return sorted(
        changes,
        key=lambda c: (
            not (c.significant and c.change < 0),
            not c.tested,
            c.change,
        ),
    )


def paired_slice_frame(changes: Sequence[PairedSliceChange]) -> pd.DataFrame:
    """One row per change, in its order: `scorer, value, n, baseline_mean, candidate_mean,
    change, low, high, adjusted_p, verdict` (verdict: `drop` / `rise` when significant after
    the correction, `no clear change`, or `too few items (n < MIN)`)."""
    rows = [
        {
            "scorer": c.scorer_id,
            "value": _label(c.value),
            "n": c.n,
            "baseline_mean": c.baseline_mean,
            "candidate_mean": c.candidate_mean,
            "change": c.change,
            "low": c.low,
            "high": c.high,
            "adjusted_p": c.adjusted_p,
            "verdict": _verdict(c),
        }
        for c in changes
    ]
    columns = [
        "scorer",
        "value",
        "n",
        "baseline_mean",
        "candidate_mean",
        "change",
        "low",
        "high",
        "adjusted_p",
        "verdict",
    ]
    return pd.DataFrame(rows, columns=columns)


def _verdict(change: PairedSliceChange) -> str:
    if not change.tested:
        return "too few items to test"
    if change.significant:
        return "drop" if change.change < 0 else "rise"
    return "no clear change"
