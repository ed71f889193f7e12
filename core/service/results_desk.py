"""The Service's results desk: a large experiment read without loading it, from summaries and
histograms computed by the database to a page of its item table and one item's detail
(docs/storage.md). Mixed into `Service` (core/service/facade.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.judge.pricing import estimate_cost_usd
from core.records import (
    ExperimentDetail,
    ExperimentInfo,
    FailureCounts,
    ItemRow,
    ResultPage,
    ResultQuery,
    ScoreHistogram,
    ScorerOutcome,
    ScorerUsage,
    ScoreSummary,
)
from core.run_results import JudgeUsage

if TYPE_CHECKING:
    from core.experiments.jobs import Jobs
    from core.storage import Store

__all__ = ["ResultsDesk"]


class ResultsDesk:
    """Reading results: mixed into `Service`, which provides the store, the jobs, an
    experiment's info and the failures this process holds."""

    if TYPE_CHECKING:  # provided by Service
        store: Store
        _jobs: Jobs

        def get_experiment(self, experiment_id: str) -> ExperimentInfo: ...

        def failures(self, experiment_id: str) -> list[ScorerOutcome]: ...

    def score_summaries(self, experiment_id: str) -> list[ScoreSummary]:
        """Per scorer: stored runs, numeric scores, mean, min and max, computed by the
        database."""
        return self.store.score_summaries(experiment_id)

    def score_histograms(self, experiment_id: str, bins: int = 10) -> list[ScoreHistogram]:
        """Per scorer: its scores counted in `bins` equal bins (over 0..1, widened to the
        lowest and highest score) by the database."""
        return self.store.score_histograms(experiment_id, bins)

    def judge_usage(self, experiment_id: str, *, priced: bool = True) -> list[ScorerUsage]:
        """Per scorer, and per prompt step of the runs that keep it: the judge calls,
        attempts, tokens and estimated cost of its stored runs, summed by the database (failed
        runs: `get_experiment(...).counts` and `failures`). `priced=False`: without the
        estimated costs, so litellm's price table is not loaded (the CLI's exports)."""
        usages = self.store.judge_usage(experiment_id)
        return [_priced(usage) for usage in usages] if priced else usages

    def failure_counts(self, experiment_id: str) -> FailureCounts:
        """How many runs failed (stored count) and, of those this process holds, how many per
        scorer."""
        info = self.store.get_experiment(experiment_id)
        failures = self.failures(experiment_id)
        by_scorer: dict[str, int] = {}
        for failure in failures:
            by_scorer[failure.scorer_id] = by_scorer.get(failure.scorer_id, 0) + 1
        return FailureCounts(
            total=max(info.counts.failed, len(failures)),
            in_memory=len(failures),
            by_scorer=by_scorer,
            details_in_memory=self._jobs.get(experiment_id) is not None,
        )

    def result_page(self, experiment_id: str, query: ResultQuery) -> ResultPage:
        """A page of the experiment's item table, filtered, sorted and counted by the database;
        each row's failed scorers (and their judge tokens) come from this process's memory,
        where `query.failed_only` is resolved too. Raises NotFoundError, and ValueError naming
        a bad field of `query`; a page past the last gives the last one."""
        failures = self.failures(experiment_id)
        item_ids = None
        if query.failed_only:
            chosen = set(query.scorer_ids)
            item_ids = {f.item_id for f in failures if not chosen or f.scorer_id in chosen}
        page = self.store.result_page(experiment_id, query, item_ids)
        return page.model_copy(update={"rows": _with_failures(page.rows, failures)})

    def item_detail(self, experiment_id: str, item_id: str) -> ExperimentDetail:
        """One item of an experiment: the detail of its stored results and in-memory failures
        (`items` holds that item only). Raises NotFoundError."""
        info = self.get_experiment(experiment_id)
        return ExperimentDetail(
            info=info,
            items=[self.store.dataset_item(info.dataset_id, item_id)],
            results=self.store.experiment_results(experiment_id, item_ids=[item_id]),
            failures=[f for f in self.failures(experiment_id) if f.item_id == item_id],
            failures_in_memory=self._jobs.get(experiment_id) is not None,
            reviews=self.store.reviews(experiment_id, [item_id]),
        )


def _priced(usage: ScorerUsage) -> ScorerUsage:
    """The usage with its estimated cost, and each step's, priced like the whole on the
    experiment's judge model (the provider's name for the model that answered can be one the
    price table lacks; the steps' costs then add up to the scorer's). litellm's price table
    is read only when there are tokens to price."""
    update: dict[str, object] = {"est_cost_usd": _cost(usage.model, usage.usage)}
    if usage.steps:
        update["steps"] = tuple(
            step.model_copy(update={"est_cost_usd": _cost(usage.model, step.usage)})
            for step in usage.steps
        )
    if usage.unsplit is not None:
        update["unsplit"] = usage.unsplit.model_copy(
            update={"est_cost_usd": _cost(usage.model, usage.unsplit.usage)}
        )
    return usage.model_copy(update=update)


def _cost(model: str | None, usage: JudgeUsage) -> float | None:
    tokens_in, tokens_out = usage.input_tokens or 0, usage.output_tokens or 0
    if not model or tokens_in + tokens_out <= 0:
        return None
    return estimate_cost_usd(model, tokens_in, tokens_out)


def _with_failures(rows: list[ItemRow], failures: Sequence[ScorerOutcome]) -> list[ItemRow]:
    """Rows with the scorers that failed on them and those runs' judge tokens."""
    if not failures:
        return rows
    shown = {row.item_id for row in rows}
    failed: dict[str, list[ScorerOutcome]] = {}
    for failure in failures:
        if failure.item_id in shown:
            failed.setdefault(failure.item_id, []).append(failure)
    return [
        row.model_copy(
            update={
                "failed": [f.scorer_id for f in failed[row.item_id]],
                "judge_tokens": row.judge_tokens
                + sum(f.usage.total_tokens or 0 for f in failed[row.item_id]),
            }
        )
        if row.item_id in failed
        else row
        for row in rows
    ]
