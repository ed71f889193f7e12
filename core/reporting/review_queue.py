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
from collections.abc import Collection, Mapping, Sequence
from typing import Literal

from pydantic import Field

from core.experiment_records import ExperimentInfo, ScorerOutcome
from core.record_base import Record
from core.reporting.reviews import scorer_range, scorer_threshold

__all__ = [
    "QueueEntry",
    "Signal",
    "outcome_confidence",
    "review_queue",
]

Signal = Literal["disagreement", "near_threshold", "low_confidence"]
_SHOWN = 0.5
"""A signal this strong or more is named in the reason, besides the strongest."""
_CONFIDENCE_STEPS = ("preprocessStepResult", "analyzeStepResult")


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
    for step in _CONFIDENCE_STEPS:
        found = (outcome.result or {}).get(step)
        if isinstance(found, Mapping):
            value = found.get("confidence")
            if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
                return float(value)
    return None


def review_queue(
    info: ExperimentInfo,
    item_ids: Sequence[str],
    outcomes: Sequence[ScorerOutcome],
    reviewed: Collection[str],
    thresholds: Mapping[str, float] | None = None,
) -> list[QueueEntry]:
    """Every item of `item_ids` (dataset order) as a queue entry, in queue order; `outcomes`:
    the stored results (their `result` JSON read for confidences), `reviewed`: the item ids
    with a review."""
    scores: dict[str, dict[str, float]] = {}
    confidences: dict[str, dict[str, float]] = {}
    for outcome in outcomes:
        if outcome.status != "success":
            continue
        if outcome.score is not None and math.isfinite(outcome.score):
            scores.setdefault(outcome.item_id, {})[outcome.scorer_id] = outcome.score
        confidence = outcome_confidence(outcome)
        if confidence is not None:
            confidences.setdefault(outcome.item_id, {})[outcome.scorer_id] = confidence
    done = set(reviewed)
    entries = [
        _entry(info, item_id, position, item_id in done, scores, confidences, thresholds)
        for position, item_id in enumerate(item_ids)
    ]
    entries.sort(key=lambda e: (e.reviewed, -e.priority, e.position))
    return entries


def _entry(
    info: ExperimentInfo,
    item_id: str,
    position: int,
    reviewed: bool,
    scores: Mapping[str, Mapping[str, float]],
    confidences: Mapping[str, Mapping[str, float]],
    thresholds: Mapping[str, float] | None,
) -> QueueEntry:
    own = scores.get(item_id, {})
    signals: dict[Signal, float] = {}
    words: dict[Signal, str] = {}
    normalised = {s: _normalised(info, s, score) for s, score in own.items()}
    if len(normalised) >= 2:
        ranked = sorted(normalised, key=lambda s: normalised[s])
        low, high = ranked[0], ranked[-1]
        signals["disagreement"] = normalised[high] - normalised[low]
        words["disagreement"] = (
            f"scorers disagree by {signals['disagreement']:.2f} "
            f"({high} {own[high]:.3g}, {low} {own[low]:.3g})"
        )
    if own:
        closest, closeness = _nearest_threshold(info, own, thresholds)
        signals["near_threshold"] = closeness
        threshold = scorer_threshold(info, closest, thresholds)
        words["near_threshold"] = (
            f"{closest} scored {own[closest]:.3g}, {abs(own[closest] - threshold):.2f} from "
            f"its threshold {threshold:g}"
        )
    reported = confidences.get(item_id, {})
    if reported:
        unsure = min(reported, key=lambda s: reported[s])
        signals["low_confidence"] = 1 - reported[unsure]
        words["low_confidence"] = f"{unsure} reports confidence {reported[unsure]:.2f}"
    return QueueEntry(
        item_id=item_id,
        position=position,
        reviewed=reviewed,
        priority=max(signals.values(), default=0.0),
        signals=signals,
        reason=_reason(signals, words, reviewed),
    )


def _normalised(info: ExperimentInfo, scorer_id: str, score: float) -> float:
    low, high = scorer_range(info, scorer_id)
    return min(1.0, max(0.0, (score - low) / (high - low)))


def _nearest_threshold(
    info: ExperimentInfo, scores: Mapping[str, float], thresholds: Mapping[str, float] | None
) -> tuple[str, float]:
    """The scorer whose score is closest to its threshold, and the closeness (0..1)."""
    best, closeness = "", -1.0
    for scorer_id, score in scores.items():
        low, high = scorer_range(info, scorer_id)
        threshold = scorer_threshold(info, scorer_id, thresholds)
        near = max(0.0, 1 - abs(score - threshold) / ((high - low) / 2))
        if near > closeness:
            best, closeness = scorer_id, near
    return best, closeness


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
