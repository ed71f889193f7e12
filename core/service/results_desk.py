"""The results desk: an experiment read in aggregates, pages, one item and slices."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core._collector import collector_paused
from core.judge.pricing import estimate_cost_usd
from core.records import (
    DatasetItem,
    ExperimentDetail,
    FailureCounts,
    ItemRow,
    ResultPage,
    ResultQuery,
    ScoreHistogram,
    ScorerOutcome,
    ScorerUsage,
    ScoreSummary,
    SliceChange,
    SliceSummary,
)
from core.run_results import JudgeUsage
from core.service import slices as slicing
from core.service.context import DeskContext
from core.service.experiments_desk import ExperimentsDesk

if TYPE_CHECKING:  # pandas and numpy: imported by Compare's use only, not each start
    from core.reporting.compare import StoredSide

__all__ = ["ResultsDesk"]


class ResultsDesk:
    """`service.results`: an experiment's results read in aggregates, pages and slices."""

    def __init__(self, context: DeskContext, experiments: ExperimentsDesk) -> None:
        self._ctx = context
        self._experiments = experiments

    def score_summaries(self, experiment_id: str) -> list[ScoreSummary]:
        """Per scorer: stored runs, numeric scores, mean, min and max, computed by the
        database."""
        return self._ctx.store.score_summaries(experiment_id)

    def score_histograms(self, experiment_id: str, bins: int = 10) -> list[ScoreHistogram]:
        """Per scorer: its scores counted in `bins` equal bins (over 0..1, widened to the
        lowest and highest score) by the database."""
        return self._ctx.store.score_histograms(experiment_id, bins)

    def judge_usage(self, experiment_id: str, *, priced: bool = True) -> list[ScorerUsage]:
        """Per scorer, and per prompt step of the runs that keep it: the judge calls,
        attempts, tokens and estimated cost of its stored runs, summed by the database (failed
        runs: `get_experiment(...).counts` and `failures`). `priced=False`: without the
        estimated costs, so litellm's price table is not loaded (the CLI's exports)."""
        usages = self._ctx.store.judge_usage(experiment_id)
        return [_priced(usage) for usage in usages] if priced else usages

    def failure_counts(self, experiment_id: str) -> FailureCounts:
        """How many runs failed (stored count) and, of those this process holds, how many per
        scorer."""
        info = self._ctx.store.get_experiment(experiment_id)
        failures = self._experiments.failures(experiment_id)
        by_scorer: dict[str, int] = {}
        for failure in failures:
            by_scorer[failure.scorer_id] = by_scorer.get(failure.scorer_id, 0) + 1
        return FailureCounts(
            total=max(info.counts.failed, len(failures)),
            in_memory=len(failures),
            by_scorer=by_scorer,
            details_in_memory=self._ctx.jobs.get(experiment_id) is not None,
        )

    def result_page(self, experiment_id: str, query: ResultQuery) -> ResultPage:
        """A page of the experiment's item table, filtered, sorted and counted by the database;
        each row's failed scorers (and their judge tokens) come from this process's memory,
        where `query.failed_only` is resolved too. Raises NotFoundError, and ValueError naming
        a bad field of `query`; a page past the last gives the last one."""
        failures = self._experiments.failures(experiment_id)
        item_ids = None
        if query.failed_only:
            chosen = set(query.scorer_ids)
            item_ids = {f.item_id for f in failures if not chosen or f.scorer_id in chosen}
        page = self._ctx.store.result_page(experiment_id, query, item_ids)
        return page.model_copy(update={"rows": _with_failures(page.rows, failures)})

    def prepare_search(self, experiment_id: str) -> bool:
        """Start building the text search index of the experiment's dataset in the background
        (SQLite; what the experiment page asks when it opens, so that the person's first search
        finds it built); whether a build runs. Raises NotFoundError for an unknown experiment."""
        return self._ctx.store.prepare_search(experiment_id)

    def compare_sides(self, experiment_ids: Sequence[str]) -> list[StoredSide]:
        """Experiments as Compare pairs them, in the order given, never loaded whole: each
        one's items (read once per dataset, shared by the experiments over it), its stored
        runs as columns (`Store.stored_scores`: item, scorer, score, reason; no result JSON),
        the stored runs that called the judge with their records (what the usage table sums;
        none for code scorers) and the failures this process holds. Raises NotFoundError
        naming an unknown experiment."""
        with collector_paused():  # tens of thousands of tuples of text: no cycle to collect
            return self._compare_sides(experiment_ids)

    def _compare_sides(self, experiment_ids: Sequence[str]) -> list[StoredSide]:
        from core.reporting.compare import StoredSide

        store = self._ctx.store
        infos = [
            self._experiments.get_experiment(experiment_id) for experiment_id in experiment_ids
        ]
        items: dict[str, list[DatasetItem]] = {}
        sides = []
        for info in infos:
            if info.dataset_id not in items:
                items[info.dataset_id] = store.dataset_items(info.dataset_id)
            judged = (
                store.experiment_results(info.id, judged_only=True)
                if any(usage.runs for usage in store.judge_usage(info.id))
                else []
            )
            sides.append(
                StoredSide(
                    info=info,
                    items=items[info.dataset_id],
                    scores=store.stored_scores(info.id),
                    judged=judged,
                    failures=self._experiments.failures(info.id),
                )
            )
        return sides

    def item_detail(self, experiment_id: str, item_id: str) -> ExperimentDetail:
        """One item of an experiment: the detail of its stored results and in-memory failures
        (`items` holds that item only). Raises NotFoundError."""
        info = self._experiments.get_experiment(experiment_id)
        return ExperimentDetail(
            info=info,
            items=[self._ctx.store.dataset_item(info.dataset_id, item_id)],
            results=self._ctx.store.experiment_results(experiment_id, item_ids=[item_id]),
            failures=[f for f in self._experiments.failures(experiment_id) if f.item_id == item_id],
            failures_in_memory=self._ctx.jobs.get(experiment_id) is not None,
            reviews=self._ctx.store.reviews(experiment_id, [item_id]),
        )

    def metadata_columns(self, experiment_id: str) -> list[str]:
        """The metadata columns of the experiment's dataset; raises NotFoundError."""
        return slicing.metadata_columns(self._ctx.store, experiment_id)

    def slices(self, experiment_id: str, column: str) -> list[SliceSummary]:
        """The experiment's results per value of a metadata column, grouped by the database:
        items, and per scorer the mean with its 95% t-interval, missing and failed runs.
        Raises NotFoundError, and ValueError naming an unknown column."""
        in_memory = self._ctx.jobs.get(experiment_id) is not None
        failures = self._experiments.failures(experiment_id) if in_memory else None
        return slicing.slices(self._ctx.store, experiment_id, column, failures)

    def compare_slices(self, baseline: str, candidate: str, column: str) -> list[SliceChange]:
        """Per slice of `column` and scorer of both experiments: the change of the mean from
        `baseline` to `candidate`, worst first. Raises NotFoundError, and ValueError when
        either dataset lacks the column."""
        return slicing.compare_slices(self.slices(baseline, column), self.slices(candidate, column))


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
