"""`Service`: the synchronous facade the dashboard and the CLI call: datasets, the scorer
catalog, and experiments run in background worker threads.

Composition only: the engine and the jobs that drive it (`core.experiments`), the store
(`core.storage`; the two never import each other: a job writes to the store as its
`ResultSink`), the judge's credential policy (`core.judge.credentials`) and the export reader.
Successful scorer results are stored as they complete; failed runs stay in this process's
memory (never in the score storage). Judge keys come from the environment or are typed for
one experiment (an argument of its own, held in memory only); they are never stored, and every
secret the process holds is masked in what the service hands out (docs/deploy.md, Judge keys).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from core._sync import run_coroutine_sync
from core.errors import ExperimentConfigError, ScorerRunError
from core.exchange.experiment_import import import_experiment
from core.experiments.engine import MAX_CONCURRENCY
from core.experiments.estimate import sample_judge_requests
from core.experiments.jobs import ExperimentJob, Jobs, StoredPairs, stored_progress
from core.experiments.ray_backend import ray_runner
from core.judge import JudgeConfig
from core.judge.budget import JudgeBudget
from core.judge.cache import JudgeCacheError, judge_cache
from core.judge.credentials import (
    DEFAULT_JUDGE_SETTINGS,
    JudgeKey,
    RoutedJudge,
    check_api_base,
    check_judge_settings,
    judge_config,
    judge_key,
    route_judge,
)
from core.judge.estimate import cost_estimate
from core.judge.pricing import estimate_cost_usd, unit_prices
from core.judge.rate_limit import judge_rate_limit
from core.judge.secrets import remember_secret, secret_masker
from core.records import (
    CostEstimate,
    DatasetInfo,
    DatasetItem,
    ExperimentConfig,
    ExperimentDetail,
    ExperimentInfo,
    ExperimentProgress,
    Review,
    ReviewVerdict,
    ScorerCatalogEntry,
    ScorerOutcome,
    ScorerSpec,
    SliceChange,
    SliceSummary,
)
from core.reporting.agreement import LabelAgreement
from core.reporting.review_queue import QueueEntry
from core.run_results import ScorerRunResult
from core.scorers import PREBUILT, PrebuiltScorer
from core.scorers.catalog import ScorerCatalog
from core.scoring import Scorer
from core.service import review_desk
from core.service import slices as slicing
from core.service.datasets_desk import DatasetDesk
from core.service.listing import RESUMABLE
from core.service.manage import ManageMixin
from core.service.mastra_desk import MastraMixin
from core.service.pass_fail import PassFailMixin
from core.service.results_desk import ResultsDesk
from core.service.themes import ThemesMixin
from core.storage import Store

__all__ = ["RESUMABLE", "SAMPLES_DIR", "Service"]

logger = logging.getLogger(__name__)

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "data" / "samples"


# ---- the service ----


class Service(DatasetDesk, ResultsDesk, ThemesMixin, ManageMixin, MastraMixin, PassFailMixin):
    """One per process (see `get_service`); thread-safe. Datasets: core/service/datasets_desk.py;
    reading results: core/service/results_desk.py; themes: core/service/themes.py; renames,
    notes, tags and deletion impacts: core/service/manage.py; a Mastra store:
    core/service/mastra_desk.py; pass/fail thresholds: core/service/pass_fail.py."""

    def __init__(
        self,
        database_url: str | None = None,
        *,
        catalog: Mapping[str, PrebuiltScorer] | None = None,
        samples_dir: Path | None = None,
    ) -> None:
        self.store = Store(database_url)
        self.catalog = ScorerCatalog(PREBUILT if catalog is None else catalog)
        self.samples_dir = SAMPLES_DIR if samples_dir is None else samples_dir
        self._jobs = Jobs()

    # ---- scorers ----

    def scorer_catalog(self) -> list[ScorerCatalogEntry]:
        """The scorers an experiment can use, with their options and steps."""
        return list(self.catalog.records)

    def build_scorer(self, spec: ScorerSpec, judge: JudgeConfig | None) -> Scorer:
        """The scorer for a catalog id and options; raises ExperimentConfigError."""
        return self.catalog.build(spec, judge)

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
        judge, _base, _settings, _routed = _judge(judge_model, api_base, judge_settings, api_key)
        scorer = self.catalog.build(spec, judge)
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
        return self.catalog.data_problems(dataset, specs)

    def comparison(self, spec: ScorerSpec) -> str | None:
        """What a chosen scorer compares with its options, in words."""
        return self.catalog.comparison(spec)

    def estimate_judge_calls(self, dataset_id: str, scorers: Sequence[str | ScorerSpec]) -> int:
        """Judge calls an experiment will make at least: items × prompt steps (the
        structured-output fallback and retries can add more)."""
        specs = [s if isinstance(s, ScorerSpec) else ScorerSpec(scorer_id=s) for s in scorers]
        items = self.store.get_dataset(dataset_id).item_count
        return items * self.catalog.judge_calls_per_item(specs)

    # ---- experiments ----

    def start_experiment(
        self,
        config: ExperimentConfig,
        *,
        api_key: SecretStr | str | None = None,
        ray_address: str | None = None,
    ) -> str:
        """Start an experiment in a background worker; returns its id at once. `api_key`: a
        key typed for this experiment, held in this process's memory only (never stored,
        exported or logged; see `judge_key` for who gets which key). `ray_address`: run its
        scorers on a Ray cluster (`auto`, `ray://host:10001`, `host:port`, `local:N`;
        default SCORELAB_RAY_ADDRESS, else in this process: docs/scale.md).

        Raises ExperimentConfigError (or NotFoundError for an unknown dataset) before anything
        is stored when the configuration cannot work, including judge settings outside the
        allow-list and an API base holding a credential.
        """
        dataset = self.store.get_dataset(config.dataset_id)
        if isinstance(config.concurrency, bool) or config.concurrency < 1:
            raise ExperimentConfigError(
                f"Concurrency must be a positive integer, got {config.concurrency!r}"
            )
        if config.concurrency > MAX_CONCURRENCY:
            raise ExperimentConfigError(
                f"Concurrency must be at most {MAX_CONCURRENCY} runs at once, got "
                f"{config.concurrency:,}"
            )
        budget = _budget(config)
        if config.cache:
            _open_judge_cache()
        judge, api_base, settings, routed = _judge(
            config.judge_model, config.api_base, config.judge_settings, api_key, config.cache
        )
        scorers = self.catalog.build_all(config.scorers, judge)
        problems = self.catalog.data_problems(dataset, config.scorers)
        if problems:
            raise ExperimentConfigError(" ".join(problems))
        rate_limit = judge_rate_limit(config.judge_model, api_base, config.rate_limit, routed)
        runner = ray_runner(
            ray_address,
            config.scorers,
            judge,
            api_key,
            self.catalog,
            capped=budget is not None,
            limits=dict([rate_limit]) if rate_limit else None,
            key=None if routed is None else routed.key,
        )
        # Read a page at a time as the runs start: a large dataset is never held whole.
        items = self.store.iter_dataset_items(dataset.id)
        name = (config.name or "").strip() or (
            f"{dataset.name} · {datetime.now(UTC):%Y-%m-%d %H:%M:%S}"
        )
        info = self.store.create_experiment(
            name=name,
            dataset_id=dataset.id,
            scorers=config.scorers,
            scorer_ids=[s.id for s in scorers],
            judge_model=config.judge_model,
            api_base=api_base,
            judge_settings=settings,
            concurrency=config.concurrency,
            cache=config.cache,
            max_cost=config.max_cost,
        )
        job = self._jobs.add(ExperimentJob(info.id, info.counts))
        job.start(
            self.store,
            items,
            scorers,
            config.concurrency,
            item_count=info.total_items,
            budget=budget,
            rate_limit=rate_limit,
            runner=runner,
        )
        return info.id

    def resume_experiment(
        self,
        experiment_id: str,
        *,
        api_key: SecretStr | str | None = None,
        max_cost: float | None = None,
        ray_address: str | None = None,
    ) -> str:
        """Run again, in a background worker, the (item, scorer) pairs of an `interrupted`,
        `cancelled` or `budget_reached` experiment that have no stored result (its failed
        runs included); returns its id, the same. The scorers and the judge are rebuilt from
        what the experiment stored (options, model, API base, settings; never a key): `api_key`
        is a key typed for this run, as in `start_experiment`. `max_cost` (USD) caps the whole
        experiment's judge spend, what it spent before included (default: the cap it was
        started with); a `budget_reached` experiment is resumed with a higher one.
        `ray_address`: as in `start_experiment` (a run on Ray resumes anywhere).

        The stored results stay as they are; the failed runs are counted anew. A pair stored
        meanwhile by another process (a resume racing the one it resumes) is kept once.
        Raises NotFoundError for an unknown id, ExperimentConfigError for any other status (or
        when the experiment's scorers cannot be rebuilt), before anything runs."""
        info = self.store.get_experiment(experiment_id)
        job = self._jobs.get(experiment_id)
        status = "running" if job is not None and job.running else info.status
        if status not in RESUMABLE:
            raise ExperimentConfigError(
                f"Experiment {info.name!r} ({experiment_id}) is {status}: only an experiment "
                f"stopped part-way ({', '.join(RESUMABLE)}) can be resumed"
            )
        scorers = self._rebuilt_scorers(info, api_key)
        budget = _resumed_budget(info, max_cost)
        judge, _base, _settings, routed = _judge(
            info.judge_model, info.api_base, info.judge_settings, api_key, info.cache
        )
        # The limit is not stored: a resumed experiment runs under the provider's default.
        rate_limit = judge_rate_limit(info.judge_model, info.api_base, None, routed)
        runner = ray_runner(
            ray_address,
            info.scorers,
            judge,
            api_key,
            self.catalog,
            capped=budget is not None,
            limits=dict([rate_limit]) if rate_limit else None,
            key=None if routed is None else routed.key,
        )
        if info.cache:
            _open_judge_cache()
        if not self.store.reopen_experiment(experiment_id, RESUMABLE):
            now = self.store.get_experiment(experiment_id).status
            raise ExperimentConfigError(
                f"Experiment {info.name!r} ({experiment_id}) is {now} now: another process "
                "resumed it first"
            )
        info = self.store.get_experiment(experiment_id)  # the stored successes, no failure
        # Only the items some scorer has not stored (the database finds them), and of those
        # the pairs without a result.
        count, unfinished = self.store.iter_unfinished_items(
            experiment_id, info.dataset_id, len(scorers)
        )
        stored = StoredPairs(
            unfinished, lambda item_ids: self.store.stored_pairs(experiment_id, item_ids)
        )
        job = self._jobs.add(ExperimentJob(info.id, info.counts))
        job.start(
            self.store,
            stored.items(),
            scorers,
            info.concurrency,
            count,
            skip=stored,
            budget=budget,
            rate_limit=rate_limit,
            runner=runner,
        )
        return info.id

    def retry_failed(self, experiment_id: str, *, api_key: SecretStr | str | None = None) -> int:
        """Run again, in a background worker, the failed runs this process holds in memory for
        an experiment; returns how many pairs it starts (`wait` and `progress` follow it like
        any run). A pair that now succeeds is stored and leaves the failures; one that fails
        again replaces its failure (never stored either). Scorers and judge are rebuilt as in
        `resume_experiment`; the experiment's status is the same after.

        Raises NotFoundError for an unknown id, ExperimentConfigError while it runs or when
        this process holds no failure of it."""
        info = self.store.get_experiment(experiment_id)
        job = self._jobs.get(experiment_id)
        failures = job.failures() if job is not None else []
        if job is None or not failures:
            gone = (
                f": its {info.counts.failed:,} failed runs were kept by a process that has "
                "since stopped (resume it instead)"
                if job is None and info.counts.failed
                else ""
            )
            raise ExperimentConfigError(
                f"Experiment {info.name!r} ({experiment_id}) has no failed run to re-run in "
                f"this process's memory{gone}"
            )
        if job.running:
            raise ExperimentConfigError(
                f"Experiment {info.name!r} ({experiment_id}) is running: re-run its failed runs "
                "once it has stopped"
            )
        scorers = self._rebuilt_scorers(info, api_key)
        items = self.store.dataset_items_by_id(info.dataset_id, (f.item_id for f in failures))
        stored = StoredPairs(
            items, lambda item_ids: self.store.stored_pairs(experiment_id, item_ids)
        )
        try:
            pairs = job.retry(
                self.store, stored.items(), len(items), scorers, info.concurrency, skip=stored
            )
        except RuntimeError as error:  # started meanwhile by another thread
            raise ExperimentConfigError(str(error)) from error
        return len(pairs)

    def _rebuilt_scorers(
        self, info: ExperimentInfo, api_key: SecretStr | str | None
    ) -> list[Scorer]:
        """The experiment's scorers as it ran them, from what it stored."""
        judge, _base, _settings, _routed = _judge(
            info.judge_model, info.api_base, info.judge_settings, api_key, info.cache
        )
        scorers = self.catalog.build_all(info.scorers, judge)
        if [scorer.id for scorer in scorers] != list(info.scorer_ids):
            raise ExperimentConfigError(
                f"Experiment {info.name!r} ({info.id}) cannot run again: the scorers it stored "
                f"({', '.join(info.scorer_ids) or 'none'}) cannot be rebuilt from their options"
            )
        return scorers

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
        dataset = self.store.get_dataset(config.dataset_id)
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
        scorers = self.catalog.build_all(config.scorers, judge)
        items = self.store.dataset_items(dataset.id, sample_size)
        sampled = run_coroutine_sync(sample_judge_requests(scorers, items))
        return cost_estimate(config.judge_model, sampled, dataset.item_count, settings)

    def progress(self, experiment_id: str) -> ExperimentProgress:
        """Where an experiment is (from memory while this process runs it, else storage)."""
        job = self._jobs.get(experiment_id)
        if job is not None:
            return _masked_progress(job.progress())
        return _masked_progress(stored_progress(self.store.get_experiment(experiment_id)))

    def cancel(self, experiment_id: str, *, abort_in_flight: bool = False) -> None:
        """Stop starting new runs (and, with `abort_in_flight`, cancel those running).

        Finished results stay stored. Raises NotFoundError for an experiment this process is
        not running.
        """
        job = self._jobs.get(experiment_id)
        if job is None:
            self.store.get_experiment(experiment_id)  # NotFoundError for an unknown id
            return  # finished, or run by another process: nothing to stop here
        job.cancel.cancel(abort_in_flight=abort_in_flight)

    def wait(
        self,
        experiment_id: str,
        timeout: float | None = None,
        *,
        until: Callable[[ExperimentProgress], bool] | None = None,
    ) -> ExperimentProgress:
        """Block until the experiment stops (its results and final row written), or until
        `until(progress)` holds; raises TimeoutError after `timeout` seconds."""
        job = self._jobs.get(experiment_id)
        if job is not None:
            return _masked_progress(job.wait(timeout, until))
        return self.progress(experiment_id)

    def list_experiments(self) -> list[ExperimentInfo]:
        """Every experiment, newest first, with per-scorer means."""
        return [self._described(info) for info in self.store.list_experiments()]

    def running_experiments(self) -> list[str]:
        """Ids of the experiments this process is running, oldest first (from memory: no
        database read, so pages can ask on every rerun)."""
        return self._jobs.running()

    def get_experiment(self, experiment_id: str) -> ExperimentInfo:
        """One experiment; raises NotFoundError."""
        return self._described(self.store.get_experiment(experiment_id))

    def load_experiment(self, experiment_id: str) -> ExperimentDetail:
        """An experiment with its items, stored results and in-memory failures."""
        info = self.get_experiment(experiment_id)
        return ExperimentDetail(
            info=info,
            items=self.store.dataset_items(info.dataset_id),
            results=self.store.experiment_results(experiment_id),
            failures=self.failures(experiment_id),
            failures_in_memory=self._jobs.get(experiment_id) is not None,
            reviews=self.store.reviews(experiment_id),
        )

    def experiment_pages(
        self, experiment_id: str, page_size: int = 2_000
    ) -> Iterator[ExperimentDetail]:
        """`load_experiment` a page of items at a time: each page holds `page_size` items in
        order, with their stored results and in-memory failures (at least one page, maybe
        empty). For exports of an experiment too large to load whole."""
        info = self.get_experiment(experiment_id)
        failures: dict[str, list[ScorerOutcome]] = {}
        for failure in self.failures(experiment_id):
            failures.setdefault(failure.item_id, []).append(failure)
        in_memory = self._jobs.get(experiment_id) is not None

        def page(items: list[DatasetItem]) -> ExperimentDetail:
            ids = [item.id for item in items]
            return ExperimentDetail(
                info=info,
                items=items,
                results=self.store.experiment_results(experiment_id, item_ids=ids),
                failures=[f for item_id in ids for f in failures.get(item_id, [])],
                failures_in_memory=in_memory,
                reviews=self.store.reviews(experiment_id, ids),
            )

        items: list[DatasetItem] = []
        given = False
        for item in self.store.iter_dataset_items(info.dataset_id, page_size):
            items.append(item)
            if len(items) == page_size:
                yield page(items)
                items, given = [], True
        if items or not given:
            yield page(items)

    def failures(self, experiment_id: str) -> list[ScorerOutcome]:
        """The failed runs of an experiment this process ran (empty otherwise), every secret
        the process holds masked (a last line: the engine masks them when it makes them)."""
        job = self._jobs.get(experiment_id)
        if job is None:
            return []
        masker = secret_masker()
        return [masker.record(outcome) for outcome in job.failures()]

    # ---- slices by metadata (core/service/slices.py) ----

    def metadata_columns(self, experiment_id: str) -> list[str]:
        """The metadata columns of the experiment's dataset; raises NotFoundError."""
        return slicing.metadata_columns(self.store, experiment_id)

    def slices(self, experiment_id: str, column: str) -> list[SliceSummary]:
        """The experiment's results per value of a metadata column, grouped by the database:
        items, and per scorer the mean with its 95% t-interval, missing and failed runs.
        Raises NotFoundError, and ValueError naming an unknown column."""
        in_memory = self._jobs.get(experiment_id) is not None
        failures = self.failures(experiment_id) if in_memory else None
        return slicing.slices(self.store, experiment_id, column, failures)

    def compare_slices(self, baseline: str, candidate: str, column: str) -> list[SliceChange]:
        """Per slice of `column` and scorer of both experiments: the change of the mean from
        `baseline` to `candidate`, worst first. Raises NotFoundError, and ValueError when
        either dataset lacks the column."""
        return slicing.compare_slices(self.slices(baseline, column), self.slices(candidate, column))

    def sample_results(self, experiment_id: str, limit: int = 500) -> list[ScorerOutcome]:
        """The first `limit` stored results with their full result JSON (a sample of the judge
        executions of a large experiment)."""
        return self.store.experiment_results(experiment_id, limit=limit)

    def sample_items(self, dataset_id: str, limit: int = 1_000) -> list[DatasetItem]:
        """A dataset's first `limit` items (e.g. to find its label columns)."""
        return self.store.dataset_items(dataset_id, limit)

    def scores_detail(self, experiment_id: str) -> ExperimentDetail:
        """`load_experiment` without the results' JSON (scores, reasons and usage only): what
        the label agreement needs, lighter, computed when it is asked for."""
        info = self.get_experiment(experiment_id)
        return ExperimentDetail(
            info=info,
            items=self.store.dataset_items(info.dataset_id),
            results=self.store.experiment_results(experiment_id, with_result=False),
            failures=self.failures(experiment_id),
            failures_in_memory=self._jobs.get(experiment_id) is not None,
            reviews=self.store.reviews(experiment_id),
        )

    def delete_experiment(self, experiment_id: str) -> None:
        """Remove a finished experiment and its results."""
        job = self._jobs.get(experiment_id)
        if job is not None and job.running:
            raise ExperimentConfigError("Cancel the experiment before deleting it")
        self.store.delete_experiment(experiment_id)
        self._jobs.forget(experiment_id)

    # ---- human reviews of scores (docs/review.md; core/service/review_desk.py) ----

    def save_review(
        self,
        experiment_id: str,
        item_id: str,
        scorer_id: str,
        verdict: ReviewVerdict,
        *,
        score: float | None = None,
        note: str = "",
        reviewer: str | None = None,
    ) -> Review:
        """Store (or update) `reviewer`'s review of a scorer's score of an item; raises
        NotFoundError, and ReviewError naming a bad field (unknown item or scorer, a verdict
        other than right/wrong, a score outside the scorer's range, a note too long)."""
        return review_desk.save(
            self.store, experiment_id, item_id, scorer_id, verdict,
            score=score, note=note, reviewer=reviewer,
        )  # fmt: skip

    def reviews(self, experiment_id: str, item_id: str | None = None) -> list[Review]:
        """An experiment's reviews (of one item, when given), oldest first."""
        return self.store.reviews(experiment_id, None if item_id is None else [item_id])

    def delete_review(
        self, experiment_id: str, item_id: str, scorer_id: str, reviewer: str
    ) -> bool:
        """Remove one review; True when there was one."""
        return self.store.delete_review(experiment_id, item_id, scorer_id, reviewer)

    def review_marks(self, experiment_id: str) -> dict[str, dict[str, ReviewVerdict]]:
        """Item id -> scorer id -> the latest review's verdict (the grid's review marks)."""
        return review_desk.verdicts(self.store, experiment_id)

    def review_queue(
        self, experiment_id: str, thresholds: Mapping[str, float] | None = None
    ) -> list[QueueEntry]:
        """Every item of the experiment, those most worth a review first, with the reason
        (core/reporting/review_queue.py); reads the scores and reported confidences only."""
        return review_desk.queue(self.store, experiment_id, thresholds)

    def review_agreement(
        self, experiment_id: str, thresholds: Mapping[str, float] | None = None
    ) -> LabelAgreement:
        """Each scorer's agreement (AUC, kappa, ...) with the reviews as labels."""
        return review_desk.scorer_agreement(self.scores_detail(experiment_id), thresholds)

    # ---- imported experiments ----

    def import_experiment_json(self, data: bytes, *, name: str | None = None) -> str:
        """Import an exported experiment (whole or nothing; `core.exchange.experiment_import`): its
        results stored, its failures in this process's memory only; returns its new id."""
        experiment_id = self._jobs.add(import_experiment(self.store, data, name)).experiment_id
        kept = _exported_thresholds(data)
        if kept:
            self.set_thresholds(experiment_id, kept)
        return experiment_id

    def _described(self, info: ExperimentInfo) -> ExperimentInfo:
        update: dict[str, Any] = {"comparisons": self.catalog.comparisons(info)}
        if info.error:
            update["error"] = secret_masker().text(info.error)
        return info.model_copy(update=update)


# ---- helpers ----


def _exported_thresholds(data: bytes) -> dict[str, Any]:
    """Scorer id -> threshold bounds from an export's `summary.thresholdResults` (the pass/fail
    thresholds kept with the experiment it came from); empty when it has none."""
    try:
        document = json.loads(data)
    except ValueError:  # the import read it already: not reached for a file it took
        return {}
    results = (
        (document.get("summary") or {}).get("thresholdResults")
        if isinstance(document, dict)
        else None
    )
    kept: dict[str, Any] = {}
    for result in results if isinstance(results, list) else []:
        if isinstance(result, dict) and isinstance(result.get("id"), str):
            bounds = result.get("threshold")
            if isinstance(bounds, dict):
                kept[result["id"]] = {k: v for k, v in bounds.items() if v is not None}
    return kept


def _judge(
    model: str | None,
    api_base: str | None,
    settings: Mapping[str, Any] | None,
    typed_key: SecretStr | str | None,
    cache: bool = False,
) -> tuple[JudgeConfig | None, str | None, dict[str, Any], RoutedJudge | None]:
    """(the judge of a model string, the API base and the settings as they may be stored, the
    model routed once for what else decides on the judge: its rate limit, a Ray recipe). No
    judge without a model (a scorer that needs one says so), but the base and the settings are
    checked all the same, since they are stored. Raises JudgeSetupError, an
    ExperimentConfigError."""
    checked_base = check_api_base(api_base)
    checked = check_judge_settings(settings)
    typed = SecretStr(typed_key) if isinstance(typed_key, str) else typed_key
    if typed is not None and not typed.get_secret_value().strip():
        typed = None
    if typed is not None:
        remember_secret(typed)  # its echoes are masked, like the environment's keys
    if not model:
        return None, checked_base, checked, None
    routed = route_judge(model, checked_base, typed=typed is not None)
    judge = judge_config(routed, checked, typed_key=typed, cache=cache)
    return judge, checked_base, checked, routed


def _open_judge_cache() -> None:
    """Open the judge cache now: one that cannot work refuses the experiment before it starts,
    rather than failing each of its runs."""
    try:
        judge_cache()
    except JudgeCacheError as error:
        raise ExperimentConfigError(str(error)) from None


def _budget(config: ExperimentConfig) -> JudgeBudget | None:
    """The spend cap of an experiment, if it has one; raises ExperimentConfigError for a cap
    that is no positive number of USD, or on a judge model litellm has no price for (the cap
    could not bound it)."""
    _check_cap(config.max_cost, config.judge_model)
    return None if config.max_cost is None else JudgeBudget(config.max_cost)


def _check_cap(cap: float | None, judge_model: str | None) -> None:
    """Raises ExperimentConfigError for a cap that cannot bound `judge_model`'s spend."""
    if cap is None:
        return
    if isinstance(cap, bool) or not isinstance(cap, int | float) or not math.isfinite(cap):
        raise ExperimentConfigError(f"The spend cap (max_cost) must be USD, got {cap!r}")
    if cap <= 0:
        raise ExperimentConfigError(f"The spend cap (max_cost) must be above $0, got {cap!r}")
    if judge_model and unit_prices(judge_model) is None:
        raise ExperimentConfigError(
            f"litellm's price table has no price for the judge model {judge_model!r}, "
            "so a spend cap (max_cost) cannot bound it: remove the cap or choose a priced "
            "model (e.g. openai/gpt-4o-mini)"
        )


def _resumed_budget(info: ExperimentInfo, max_cost: float | None) -> JudgeBudget | None:
    """The spend cap of a resumed experiment: `max_cost` (else the one it started with) less
    what its stored runs' judge calls cost (litellm's prices of their tokens); raises
    ExperimentConfigError when nothing is left of it."""
    cap = info.max_cost if max_cost is None else max_cost
    _check_cap(cap, info.judge_model)
    if cap is None:
        return None
    usage = info.counts.usage
    spent = estimate_cost_usd(info.judge_model, usage.input_tokens or 0, usage.output_tokens or 0)
    left = cap - (spent or 0.0)
    if left <= 0:
        raise ExperimentConfigError(
            f"Experiment {info.name!r} ({info.id}) has spent about ${spent:,.4f} of its judge "
            f"budget already, which a cap of ${cap:,.4f} does not leave room for: resume it "
            "with a higher max_cost"
        )
    return JudgeBudget(left)


def _masked_progress(progress: ExperimentProgress) -> ExperimentProgress:
    if not progress.error:
        return progress
    return progress.model_copy(update={"error": secret_masker().text(progress.error)})
