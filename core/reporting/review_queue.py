"""The review queue (docs/review.md): an experiment's items in the order most worth a person's
look first.

Each item gets three signals, each from 0 (nothing to see) to 1:

- **disagreement**: the spread (highest minus lowest) of its scorers' normalised scores, each
  score mapped to 0..1 over its scorer's range; needs two scorers with a score;
- **near threshold**: how close its closest score is to that scorer's decision threshold,
  `1 - |score - threshold| / half the range` (1 on the threshold, 0 at either end);
- **low confidence**: `1 - confidence` for the lowest confidence a scorer reports for it (a
  number in [0, 1] under `confidence` in the run's preprocess or analyze step result).

The queue puts the items nobody reviewed first, then orders by the strongest signal (highest
first), then by dataset position. The reason shown for an item names each signal of 0.5 or
more, strongest first (the strongest one always).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from core.record_base import Record
from core.records import CONFIDENCE_STEPS, ExperimentInfo, ScoredRun, ScorerOutcome
from core.reporting.reviews import scorer_range, scorer_threshold

__all__ = [
    "QueueEntry",
    "Signal",
    "outcome_confidence",
    "reported_confidence",
    "review_queue",
    "scored_runs",
]

Signal = Literal["disagreement", "near_threshold", "low_confidence"]
_SHOWN = 0.5
"""A signal this strong or more is named in the reason, besides the strongest."""


class QueueEntry(Record):
    """One item's place in the review queue, and why."""

    item_id: str
    """The item."""
    position: int
    """Its place in the dataset (from 0)."""
    reviewed: bool
    """Whether anyone reviewed one of its scores already."""
    priority: float
    """Its strongest signal (0..1): the queue's order after `reviewed`."""
    signals: dict[Signal, float] = Field(default_factory=dict)
    """Each signal it has (module docstring), 0..1."""
    reason: str
    """Why it is where it is, in words."""


def outcome_confidence(outcome: ScorerOutcome) -> float | None:
    """The confidence a run reports (module docstring), if any."""
    result = outcome.result or {}
    return reported_confidence(
        [
            found.get("confidence") if isinstance(found := result.get(step), Mapping) else None
            for step in CONFIDENCE_STEPS
        ]
    )


def scored_runs(outcomes: Iterable[ScorerOutcome]) -> list[ScoredRun]:
    """The successful outcomes as the queue reads them (their confidence taken from their
    result JSON; the store reads the same without the JSON: `Store.scored_runs`)."""
    return [
        ScoredRun.model_construct(
            item_id=outcome.item_id,
            scorer_id=outcome.scorer_id,
            score=outcome.score,
            confidences=[outcome_confidence(outcome)],
        )
        for outcome in outcomes
        if outcome.status == "success"
    ]


def reported_confidence(values: Iterable[Any]) -> float | None:
    """The first of `values` that is a number in [0, 1] (a run's confidence), if any."""
    for value in values:
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
            return float(value)
    return None


def review_queue(
    info: ExperimentInfo,
    item_ids: Sequence[str],
    runs: Iterable[ScoredRun],
    reviewed: Collection[str],
    thresholds: Mapping[str, float] | None = None,
) -> list[QueueEntry]:
    """Every item of `item_ids` (dataset order) as a queue entry, in queue order; `runs`: the
    stored runs (`scored_runs` of outcomes, or `Store.scored_runs`), `reviewed`: the item ids
    with a review."""
    scores: dict[str, dict[str, float]] = {}
    confidences: dict[str, dict[str, float]] = {}
    for run in runs:
        if run.score is not None and math.isfinite(run.score):
            scores.setdefault(run.item_id, {})[run.scorer_id] = run.score
        confidence = reported_confidence(run.confidences)
        if confidence is not None:
            confidences.setdefault(run.item_id, {})[run.scorer_id] = confidence
    done = set(reviewed)
    scales = _Scales(info, thresholds)
    entries = [
        _entry(scales, item_id, position, item_id in done, scores, confidences)
        for position, item_id in enumerate(item_ids)
    ]
    entries.sort(key=lambda e: (e.reviewed, -e.priority, e.position))
    return entries


class _Scales:
    """Each scorer's (low, high, threshold), worked out once per queue."""

    def __init__(self, info: ExperimentInfo, thresholds: Mapping[str, float] | None) -> None:
        self._info, self._thresholds = info, thresholds
        self._known: dict[str, tuple[float, float, float]] = {}

    def __call__(self, scorer_id: str) -> tuple[float, float, float]:
        found = self._known.get(scorer_id)
        if found is None:
            low, high = scorer_range(self._info, scorer_id)
            threshold = scorer_threshold(self._info, scorer_id, self._thresholds)
            found = self._known[scorer_id] = (low, high, threshold)
        return found

    def normalised(self, scorer_id: str, score: float) -> float:
        low, high, _ = self(scorer_id)
        return min(1.0, max(0.0, (score - low) / (high - low)))

    def nearness(self, scorer_id: str, score: float) -> float:
        """1 on the threshold, 0 at half the range from it or further."""
        low, high, threshold = self(scorer_id)
        return max(0.0, 1 - abs(score - threshold) / ((high - low) / 2))


def _entry(
    scales: _Scales,
    item_id: str,
    position: int,
    reviewed: bool,
    scores: Mapping[str, Mapping[str, float]],
    confidences: Mapping[str, Mapping[str, float]],
) -> QueueEntry:
    own = scores.get(item_id, {})
    signals: dict[Signal, float] = {}
    words: dict[Signal, str] = {}
    normalised = {s: scales.normalised(s, score) for s, score in own.items()}
    if len(normalised) >= 2:
        ranked = sorted(normalised, key=lambda s: normalised[s])
        low, high = ranked[0], ranked[-1]
        signals["disagreement"] = normalised[high] - normalised[low]
        words["disagreement"] = (
            f"scorers disagree by {signals['disagreement']:.2f} "
            f"({high} {own[high]:.3g}, {low} {own[low]:.3g})"
        )
    if own:
        nearness = {s: scales.nearness(s, score) for s, score in own.items()}
        closest = max(nearness, key=lambda s: nearness[s])  # the first of ties
        signals["near_threshold"] = nearness[closest]
        threshold = scales(closest)[2]
        words["near_threshold"] = (
            f"{closest} scored {own[closest]:.3g}, {abs(own[closest] - threshold):.2f} from "
            f"its threshold {threshold:g}"
        )
    reported = confidences.get(item_id, {})
    if reported:
        unsure = min(reported, key=lambda s: reported[s])
        signals["low_confidence"] = 1 - reported[unsure]
        words["low_confidence"] = f"{unsure} reports confidence {reported[unsure]:.2f}"
    return QueueEntry.model_construct(
        item_id=item_id,
        position=position,
        reviewed=reviewed,
        priority=max(signals.values(), default=0.0),
        signals=signals,
        reason=_reason(signals, words, reviewed),
    )


def _reason(signals: Mapping[Signal, float], words: Mapping[Signal, str], reviewed: bool) -> str:
    if not signals:
        text = "no stored score"
    elif max(signals.values()) == 0:
        text = "nothing stands out: scores agree and are far from the thresholds"
    else:
        ranked = sorted(signals, key=lambda s: -signals[s])
        named = [s for s in ranked if s == ranked[0] or signals[s] >= _SHOWN]
        text = "; ".join(words[s] for s in named)
    return f"reviewed already · {text}" if reviewed else text
