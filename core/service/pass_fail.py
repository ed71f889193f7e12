"""Pass/fail thresholds kept with an experiment (issue 21): `Service.thresholds`,
`Service.set_thresholds` and `Service.pass_fail`: the desk `service.grading`.

A threshold bounds a scorer's scores (inclusive `min` and/or `max`, from 0 to 1, a plain number
being a minimum): the same `parse_threshold` and `check_threshold` as `run_evals` and
`scorelab run --threshold` (core/experiments/thresholds.py). The experiment passes a scorer when
its mean is within the bounds and no run of it failed or is missing (the CLI's default
`--max-failure-rate 0`); an item passes a scorer when its score is within them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from core.errors import InvalidInputError, MastraError
from core.experiments.thresholds import (
    Threshold,
    ThresholdResult,
    check_threshold,
    parse_threshold,
)
from core.service.context import DeskContext
from core.service.experiments_desk import ExperimentsDesk
from core.service.results_desk import ResultsDesk

__all__ = ["PassFail", "PassFailDesk"]


class PassFail:
    """An experiment's thresholds and what they say: per scorer the `ThresholdResult` of its
    mean, the share of items whose every thresholded score passes, and the verdict."""

    def __init__(
        self,
        thresholds: dict[str, Threshold],
        results: list[ThresholdResult],
        items: dict[str, bool] | None = None,
    ) -> None:
        self.thresholds = thresholds
        """Scorer id -> its threshold, as kept with the experiment."""
        self.results = results
        """Per thresholded scorer (in the experiment's order), how its mean did."""
        self.items = items or {}
        """Item id -> whether every thresholded score of the item is within its bounds (a
        failed or missing run is not)."""

    @property
    def pass_rate(self) -> float | None:
        """The share of items that pass (`items`), None without a threshold or an item."""
        if not self.items:
            return None
        return sum(self.items.values()) / len(self.items)

    @property
    def passed(self) -> bool | None:
        """True when every thresholded scorer passed, False when one failed, None without a
        threshold."""
        if not self.results:
            return None
        return all(result.passed for result in self.results)

    def json(self) -> list[dict[str, Any]]:
        """The export's `summary.thresholdResults` (camelCase, like the CLI's)."""
        return [result.model_dump(mode="json", by_alias=True) for result in self.results]

    def mark(self, item_id: str) -> str:
        """The grid's mark of an item: ✓ passes, ✗ does not, "" without a threshold."""
        if item_id not in self.items:
            return ""
        return "✓" if self.items[item_id] else "✗"


class PassFailDesk:
    """`service.grading`: pass/fail thresholds kept with an experiment, and what they say."""

    def __init__(
        self, context: DeskContext, experiments: ExperimentsDesk, results: ResultsDesk
    ) -> None:
        self._ctx = context
        self._experiments = experiments
        self._results = results

    def thresholds(self, experiment_id: str) -> dict[str, Threshold]:
        """The experiment's thresholds, scorer id -> `Threshold` (empty when none is set);
        raises NotFoundError."""
        self._experiments.get_experiment(experiment_id)
        return {
            scorer_id: Threshold(min=low, max=high)
            for scorer_id, (low, high) in self._ctx.store.thresholds(experiment_id).items()
        }

    def set_thresholds(self, experiment_id: str, given: Mapping[str, Any]) -> dict[str, Threshold]:
        """Keep these thresholds with the experiment (replacing its others): scorer id -> a
        number (a minimum), `{"min": .., "max": ..}` or a `Threshold`; None or an empty dict
        leaves the scorer without one. Raises InvalidInputError naming the scorer and the
        problem (an unknown scorer, a bound outside 0..1, min above max), NotFoundError."""
        info = self._experiments.get_experiment(experiment_id)
        kept: dict[str, Threshold] = {}
        for scorer_id, value in given.items():
            if scorer_id not in info.scorer_ids:
                raise InvalidInputError(
                    f"Threshold for {scorer_id!r}: experiment {info.name!r} has no such scorer "
                    f"(its scorers: {', '.join(map(repr, info.scorer_ids))})"
                )
            if value is None or value == {}:
                continue
            try:
                threshold = parse_threshold(scorer_id, value)
            except MastraError as error:
                raise InvalidInputError(str(error.message)) from None
            if threshold.min is None and threshold.max is None:
                continue
            kept[scorer_id] = threshold
        self._ctx.store.save_thresholds(experiment_id, {s: (t.min, t.max) for s, t in kept.items()})
        return kept

    def pass_fail(self, experiment_id: str) -> PassFail:
        """Each thresholded scorer's `check_threshold` on its mean, its failed or missing runs
        counted against it (items without a stored run of it: `--max-failure-rate 0`)."""
        info = self._experiments.get_experiment(experiment_id)
        kept = self.thresholds(experiment_id)
        if not kept:
            return PassFail({}, [])
        summaries = {s.scorer_id: s for s in self._results.score_summaries(experiment_id)}
        results = []
        for scorer_id in info.scorer_ids:
            if scorer_id not in kept:
                continue
            summary = summaries.get(scorer_id)
            stored = summary.count if summary is not None else 0
            results.append(
                check_threshold(
                    scorer_id,
                    kept[scorer_id],
                    summary.mean if summary is not None else None,
                    failed_runs=max(info.total_items - stored, 0),
                    total_runs=info.total_items,
                )
            )
        item_ids, runs = self._ctx.store.scored_runs(experiment_id)
        scores: dict[str, dict[str, float | None]] = {}
        for run in runs:
            if run.scorer_id in kept:
                scores.setdefault(run.item_id, {})[run.scorer_id] = run.score
        items = {
            item_id: all(
                threshold.passes(_finite(scores.get(item_id, {}).get(scorer_id)))
                for scorer_id, threshold in kept.items()
            )
            for item_id in item_ids
        }
        return PassFail(kept, results, items)


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
