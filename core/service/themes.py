"""Themes in judge reasons and failure errors (issue 14): the desk `service.theming`; the
grouping itself is core/reporting/themes.py."""

from __future__ import annotations

from typing import get_args

from core.errors import InvalidInputError
from core.records import (
    ExperimentInfo,
    ScorerOutcome,
    ThemeKind,
    ThemeReport,
)
from core.reporting.themes import (
    DEFAULT_QUANTILE,
    MAX_THEMES,
    cluster_texts,
    low_scores,
    reason_text,
)
from core.service.context import DeskContext
from core.service.experiments_desk import ExperimentsDesk

__all__ = ["ThemesDesk"]


class ThemesDesk:
    """`service.theming`: themes in judge reasons and failure errors."""

    def __init__(self, context: DeskContext, experiments: ExperimentsDesk) -> None:
        self._ctx = context
        self._experiments = experiments

    def themes(
        self,
        experiment_id: str,
        scorer_id: str | None = None,
        kind: ThemeKind = "low_scores",
        seed: int = 0,
        *,
        threshold: float | None = None,
        quantile: float = DEFAULT_QUANTILE,
        max_themes: int = MAX_THEMES,
    ) -> ThemeReport:
        """The themes of a scorer's judge reasons on its low-scoring items (`low_scores`:
        below `threshold`, or else in the lowest `quantile` of its scores), or of the errors
        of the failed runs this process holds (`failures`; `scorer_id` None: every scorer).
        The same data and `seed` give the same themes.

        Raises NotFoundError for an unknown experiment, InvalidInputError for an unknown kind
        or scorer, a bad threshold, quantile or theme count."""
        info = self._experiments.get_experiment(experiment_id)
        if kind not in get_args(ThemeKind):
            raise InvalidInputError(
                f"Unknown theme kind {kind!r}: choose one of {', '.join(get_args(ThemeKind))}"
            )
        if isinstance(max_themes, bool) or not isinstance(max_themes, int) or max_themes < 1:
            raise InvalidInputError(f"max_themes must be a positive integer, got {max_themes!r}")
        if scorer_id is not None and scorer_id not in info.scorer_ids:
            raise InvalidInputError(
                f"Experiment {info.name!r} has no scorer {scorer_id!r}: its scorers are "
                f"{', '.join(info.scorer_ids) or 'none'}"
            )
        if kind == "failures":
            return self._failure_themes(info, scorer_id, seed, max_themes)
        if scorer_id is None:
            raise InvalidInputError("Themes of low scores need a scorer: give scorer_id")
        outcomes = self._ctx.store.experiment_results(
            experiment_id, scorer_id=scorer_id, with_result=False
        )
        try:
            low = low_scores(outcomes, threshold, quantile)
        except ValueError as error:
            raise InvalidInputError(str(error)) from None
        texts = [(o.item_id, reason_text(o.reason)) for o in low.outcomes]
        with_text = [pair for pair in texts if pair[1]]
        return ThemeReport(
            experiment_id=experiment_id,
            scorer_id=scorer_id,
            kind=kind,
            basis=low.basis(),
            threshold=low.threshold,
            quantile=low.quantile,
            cutoff=low.cutoff,
            considered=len(with_text),
            without_text=len(texts) - len(with_text),
            seed=seed,
            themes=cluster_texts(with_text, seed=seed, max_themes=max_themes),
        )

    def _failure_themes(
        self, info: ExperimentInfo, scorer_id: str | None, seed: int, max_themes: int
    ) -> ThemeReport:
        failures = [
            f
            for f in self._experiments.failures(info.id)
            if scorer_id is None or f.scorer_id == scorer_id
        ]
        texts = [(f.item_id, _error_text(f)) for f in failures]
        with_text = [pair for pair in texts if pair[1]]
        whose = f"scorer {scorer_id}" if scorer_id else "every scorer"
        return ThemeReport(
            experiment_id=info.id,
            scorer_id=scorer_id,
            kind="failures",
            basis=f"errors of the {len(failures):,} failed runs of {whose} held in memory",
            considered=len(with_text),
            without_text=len(texts) - len(with_text),
            seed=seed,
            themes=cluster_texts(with_text, seed=seed, max_themes=max_themes),
        )


def _error_text(failure: ScorerOutcome) -> str:
    """The error with its class name (a telling word too); "" when it has no message."""
    message = (failure.error or "").strip()
    if not message:
        return ""
    return f"{failure.error_type}: {message}" if failure.error_type else message
