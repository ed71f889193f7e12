"""The scorer desk: the catalog, the playground, a judge's key, what a config needs and costs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import SecretStr

from core._sync import run_coroutine_sync
from core.errors import ExperimentConfigError, ScorerRunError
from core.experiments.estimate import sample_judge_requests
from core.judge import JudgeConfig
from core.judge.credentials import (
    DEFAULT_JUDGE_SETTINGS,
    JudgeKey,
    check_api_base,
    check_judge_settings,
    judge_key,
)
from core.judge.estimate import cost_estimate
from core.judge.secrets import secret_masker
from core.records import CostEstimate, DatasetInfo, ExperimentConfig, ScorerCatalogEntry, ScorerSpec
from core.run_results import ScorerRunResult
from core.scoring import Scorer
from core.service import judging
from core.service.context import DeskContext

__all__ = ["ScorersDesk"]


class ScorersDesk:
    """`service.scorers`: the scorer catalog and what a configuration needs before it runs."""

    def __init__(self, context: DeskContext) -> None:
        self._ctx = context

    def scorer_catalog(self) -> list[ScorerCatalogEntry]:
        """The scorers an experiment can use, with their options and steps."""
        return list(self._ctx.catalog.records)

    def build_scorer(self, spec: ScorerSpec, judge: JudgeConfig | None) -> Scorer:
        """The scorer for a catalog id and options; raises ExperimentConfigError."""
        return self._ctx.catalog.build(spec, judge)

    def try_scorer(
        self,
        spec: ScorerSpec,
        *,
        output: Any,
        input: Any = None,
        ground_truth: Any = None,
        request_context: Any = None,
        judge_model: str | None = None,
        api_base: str | None = None,
        judge_settings: Mapping[str, Any] | None = None,
        api_key: SecretStr | str | None = None,
    ) -> ScorerRunResult:
        """Run one catalog scorer on one input/output (the playground), blocking; `api_key`:
        a key typed for this run (held in memory only; see `judge_key` for who gets which).

        Raises ExperimentConfigError for a configuration that cannot work and ScorerRunError
        when a step fails (secrets masked in its message); nothing is stored.
        """
        judge, _base, _settings, _routed = judging.set_up_judge(
            judge_model, api_base, judge_settings, api_key
        )
        scorer = self._ctx.catalog.build(spec, judge)
        try:
            return scorer.run_sync(
                input=input,
                output=output,
                ground_truth=ground_truth,
                request_context=request_context,
            )
        except ScorerRunError as error:
            secret_masker().exception(error)
            raise

    def judge_key(
        self, judge_model: str, api_base: str | None = None, *, typed: bool = False
    ) -> JudgeKey:
        """Which key a judge of `judge_model` at `api_base` would get (`typed`: with a key
        typed for it), without the key: `.describe()` says it in one line for the page or the
        CLI. Raises ExperimentConfigError for an unroutable model or a bad API base."""
        return judge_key(judge_model, api_base, typed=typed)

    def data_problems(self, dataset: DatasetInfo, specs: Sequence[ScorerSpec]) -> list[str]:
        """What the chosen scorers need that the dataset does not map, one sentence each."""
        return self._ctx.catalog.data_problems(dataset, specs)

    def comparison(self, spec: ScorerSpec) -> str | None:
        """What a chosen scorer compares with its options, in words."""
        return self._ctx.catalog.comparison(spec)

    def estimate_judge_calls(self, dataset_id: str, scorers: Sequence[str | ScorerSpec]) -> int:
        """Judge calls an experiment will make at least: items × prompt steps (the
        structured-output fallback and retries can add more)."""
        specs = [s if isinstance(s, ScorerSpec) else ScorerSpec(scorer_id=s) for s in scorers]
        items = self._ctx.store.get_dataset(dataset_id).item_count
        return items * self._ctx.catalog.judge_calls_per_item(specs)

    def estimate_cost(self, config: ExperimentConfig, *, sample_size: int = 20) -> CostEstimate:
        """What the experiment's judge calls would probably cost: an estimate from the first
        `sample_size` items, whose real prompts are built (a dry run: no judge is called)
        and counted by litellm's token counter, priced by litellm's price table. Low and high
        come from the smallest and the largest sampled item (docs/core.md, Cost estimate and
        spend cap). Raises ExperimentConfigError (NotFoundError) like `start_experiment`."""
        if isinstance(sample_size, bool) or not isinstance(sample_size, int) or sample_size < 1:
            raise ExperimentConfigError(
                f"The cost estimate's sample size must be a whole number above 0, got "
                f"{sample_size!r}"
            )
        dataset = self._ctx.store.get_dataset(config.dataset_id)
        api_base = check_api_base(config.api_base)
        settings = check_judge_settings(config.judge_settings)
        judge = None
        if config.judge_model:
            # No key: nothing is sent, and a missing key must not hide the estimate.
            judge = JudgeConfig(
                model=config.judge_model,
                api_base=api_base,
                model_settings={**DEFAULT_JUDGE_SETTINGS, **settings},
            )
        scorers = self._ctx.catalog.build_all(config.scorers, judge)
        items = self._ctx.store.dataset_items(dataset.id, sample_size)
        sampled = run_coroutine_sync(sample_judge_requests(scorers, items))
        return cost_estimate(config.judge_model, sampled, dataset.item_count, settings)
